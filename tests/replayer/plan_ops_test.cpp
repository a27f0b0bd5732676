// build_plan: what each task becomes (kernel, copy, memset, nothing), the device memory the
// iteration writes, and allocations freed during the iteration (replayed on shadows).
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace nimble::replayer {

// Found by argument-dependent lookup, so in the namespace of MemoryRange.
bool operator==(const MemoryRange& a, const MemoryRange& b) { return a.addr == b.addr && a.size == b.size; }
std::ostream& operator<<(std::ostream& out, const MemoryRange& r) {
  return out << "{0x" << std::hex << r.addr << ", " << std::dec << r.size << "}";
}

namespace {

using test::document;
using test::joined;
using test::kernel;
using test::parse;
using test::plan_of;

using Bytes = std::vector<std::uint8_t>;


// ---------------------------------------------------------------------------------------------
// Kernels

const char* const kKernelTrace = R"json({
  "format": "nimble-trace", "version": 1,
  "allocations": [{"id": 0, "addr": "0x7f0000000000", "size": 1024, "kind": "device"}],
  "tasks": [
    {"id": 0, "kind": "kernel", "deps": [], "name": "scale(float*, int)", "function": "0x7fab12345678",
     "handle": "CUkernel",
     "launch": {"grid": [4, 2, 3], "block": [128, 2, 1], "shared_mem_bytes": 4096, "cooperative": true,
                "attributes": [
                  {"id": 2, "name": "COOPERATIVE", "value": "01000000"},
                  {"id": 7, "name": "PROGRAMMATIC_EVENT", "value": "aabbccdd"},
                  {"id": 4, "name": "CLUSTER_DIMENSION", "value": "020000000100000001000000"},
                  {"id": 12, "name": "LAUNCH_COMPLETION_EVENT", "value": "ee"},
                  {"id": 99, "name": "FUTURE", "value": ""}
                ]},
     "args": {"bytes": "00000000007f0000FF0010ab",
              "params": [{"offset": 0, "size": 8}, {"offset": 8, "size": 4}],
              "pointers": [{"offset": 0, "alloc": 0, "alloc_offset": 0}]},
     "mem": [{"alloc": 0, "offset": 0, "size": 1024, "mode": "rw"}]},
    {"id": 1, "kind": "kernel", "deps": [0], "function": "0xabc", "handle": "CUfunction",
     "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]},
     "args": {"bytes": ""}},
    {"id": 2, "kind": "kernel", "deps": [1], "name": null, "function": "0xdef",
     "launch": {"grid": [7, 1, 1], "block": [64, 1, 1], "shared_mem_bytes": 0, "cooperative": false},
     "args": {"bytes": "2a000000", "params": [{"offset": 0, "size": 4}]}}
  ]
})json";

TEST(PlanKernel, LaunchConfigurationAndHandle) {
  const PlanResult r = plan_of(parse(kKernelTrace));
  ASSERT_TRUE(r.plan) << joined(r);
  ASSERT_EQ(r.plan->ops.size(), 3u);
  const Op& op = r.plan->ops[0];
  EXPECT_EQ(op.task, 0);
  EXPECT_EQ(op.name, "scale(float*, int)");
  ASSERT_EQ(op.kind, OpKind::Kernel);
  const KernelOp& k = op.kernel;
  EXPECT_EQ(k.function, 0x7fab12345678u);
  EXPECT_TRUE(k.is_cukernel);
  EXPECT_EQ(k.grid[0], 4u);
  EXPECT_EQ(k.grid[1], 2u);
  EXPECT_EQ(k.grid[2], 3u);
  EXPECT_EQ(k.block[0], 128u);
  EXPECT_EQ(k.block[1], 2u);
  EXPECT_EQ(k.block[2], 1u);
  EXPECT_EQ(k.shared_mem, 4096u);
  EXPECT_TRUE(k.cooperative);
  EXPECT_TRUE(k.pointer_fixes.empty());  // the allocation is live: the pointer stays as recorded
}

TEST(PlanKernel, DefaultsWhenOptionalFieldsAreAbsent) {
  const PlanResult r = plan_of(parse(kKernelTrace));
  ASSERT_TRUE(r.plan) << joined(r);
  const KernelOp& k = r.plan->ops[1].kernel;
  EXPECT_EQ(r.plan->ops[1].kind, OpKind::Kernel);
  EXPECT_EQ(k.function, 0xabcu);
  EXPECT_FALSE(k.is_cukernel);  // "handle": "CUfunction"
  EXPECT_EQ(k.shared_mem, 0u);
  EXPECT_FALSE(k.cooperative);
  EXPECT_TRUE(k.args.empty());
  EXPECT_TRUE(k.param_offsets.empty());
  EXPECT_TRUE(k.attributes.empty());
  EXPECT_EQ(r.plan->ops[1].name, "kernel");  // no name: the kind stands in

  const KernelOp& k2 = r.plan->ops[2].kernel;
  EXPECT_EQ(k2.function, 0xdefu);
  EXPECT_FALSE(k2.is_cukernel);  // no "handle" at all: a CUfunction
  EXPECT_FALSE(k2.cooperative);  // "cooperative": false
  EXPECT_EQ(k2.grid[0], 7u);
  EXPECT_EQ(k2.block[0], 64u);
  EXPECT_EQ(k2.args, (Bytes{0x2a, 0, 0, 0}));
  EXPECT_EQ(r.plan->ops[2].name, "kernel");  // "name": null
}

TEST(PlanKernel, ArgumentBytesAreDecodedFromHexInMemoryOrder) {
  const PlanResult r = plan_of(parse(kKernelTrace));
  ASSERT_TRUE(r.plan) << joined(r);
  const KernelOp& k = r.plan->ops[0].kernel;
  // Upper- and lower-case digits both decode.
  EXPECT_EQ(k.args, (Bytes{0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, 0xff, 0x00, 0x10, 0xab}));
  EXPECT_EQ(k.param_offsets, (std::vector<std::uint32_t>{0, 8}));
}

TEST(PlanKernel, LaunchAttributesKeepRawBytesExceptProgramEventAttributes) {
  const PlanResult r = plan_of(parse(kKernelTrace));
  ASSERT_TRUE(r.plan) << joined(r);
  const auto& attrs = r.plan->ops[0].kernel.attributes;
  // 7 (PROGRAMMATIC_EVENT) and 12 (LAUNCH_COMPLETION_EVENT) name the program's events: dropped.
  // Every other attribute is kept, in order, including ids nimble does not know.
  ASSERT_EQ(attrs.size(), 3u);
  EXPECT_EQ(attrs[0].id, 2);
  EXPECT_EQ(attrs[0].value, (Bytes{1, 0, 0, 0}));
  EXPECT_EQ(attrs[1].id, 4);
  EXPECT_EQ(attrs[1].value, (Bytes{2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(attrs[2].id, 99);
  EXPECT_TRUE(attrs[2].value.empty());
  for (const auto& a : attrs) EXPECT_TRUE(a.id != 7 && a.id != 12) << a.id;
}

TEST(PlanKernel, FunctionAddressUsesAllSixtyFourBits) {
  const PlanResult r = plan_of(parse(document(kernel(0, "[]", R"("handle": "CUkernel")"))));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->ops[0].kernel.function, 0x1000u);
  auto trace = parse(document(kernel(0, "[]")));
  trace.tasks[0].extra["function"] = "0xffffffffffffffff";
  const PlanResult big = plan_of(trace);
  ASSERT_TRUE(big.plan) << joined(big);
  EXPECT_EQ(big.plan->ops[0].kernel.function, 0xffffffffffffffffu);
}

// ---------------------------------------------------------------------------------------------
// Copies

const char* const kCopyTrace = R"({
  "format": "nimble-trace", "version": 1,
  "allocations": [
    {"id": 0, "addr": "0x7f0000000000", "size": 4096, "kind": "device"},
    {"id": 1, "addr": "0x7f0000100000", "size": 8192, "kind": "device"}
  ],
  "tasks": [
    {"id": 0, "kind": "memcpy", "deps": [],
     "copy": {"direction": "HtoD", "src": "0x560000001000", "dst": "0x7f0000000000", "bytes": 1024},
     "mem": [{"addr": "0x560000001000", "size": 1024, "mode": "r"},
             {"alloc": 0, "offset": 0, "size": 1024, "mode": "w"}]},
    {"id": 1, "kind": "memcpy", "deps": [0],
     "copy": {"direction": "DtoD", "src": "0x7f0000000000", "dst": "0x7f0000100100", "bytes": 6000},
     "mem": [{"alloc": 0, "offset": 0, "size": 4096, "mode": "r"},
             {"alloc": 1, "offset": 256, "size": 6000, "mode": "w"}]},
    {"id": 2, "kind": "memcpy", "deps": [1],
     "copy": {"direction": "DtoH", "src": "0x7f0000100100", "dst": "0x560000009000", "bytes": 4000},
     "mem": [{"alloc": 1, "offset": 256, "size": 4000, "mode": "r"},
             {"addr": "0x560000009000", "size": 4000, "mode": "w"}]}
  ]
})";

TEST(PlanCopy, DirectionsAddressesAndBytes) {
  const PlanResult r = plan_of(parse(kCopyTrace));
  ASSERT_TRUE(r.plan) << joined(r);
  const auto& ops = r.plan->ops;
  ASSERT_EQ(ops.size(), 3u);
  for (const Op& op : ops) {
    EXPECT_EQ(op.kind, OpKind::Copy) << op.task;
    EXPECT_EQ(op.name, "memcpy");
    EXPECT_FALSE(op.copy.src_shadow);
    EXPECT_FALSE(op.copy.dst_shadow);
  }
  EXPECT_EQ(ops[0].copy.direction, CopyDirection::HtoD);
  EXPECT_EQ(ops[0].copy.src, 0x560000001000u);
  EXPECT_EQ(ops[0].copy.dst, 0x7f0000000000u);
  EXPECT_EQ(ops[0].copy.bytes, 1024u);
  EXPECT_EQ(ops[1].copy.direction, CopyDirection::DtoD);
  EXPECT_EQ(ops[1].copy.src, 0x7f0000000000u);
  EXPECT_EQ(ops[1].copy.dst, 0x7f0000100100u);
  EXPECT_EQ(ops[1].copy.bytes, 6000u);
  EXPECT_EQ(ops[2].copy.direction, CopyDirection::DtoH);
  EXPECT_EQ(ops[2].copy.src, 0x7f0000100100u);
  EXPECT_EQ(ops[2].copy.dst, 0x560000009000u);
  EXPECT_EQ(ops[2].copy.bytes, 4000u);
}

TEST(PlanCopy, HostBytesIsTheLargestHostSideCopy) {
  const PlanResult r = plan_of(parse(kCopyTrace));
  ASSERT_TRUE(r.plan) << joined(r);
  // HtoD 1024 and DtoH 4000 have host ends; the 6000-byte DtoD copy does not count.
  EXPECT_EQ(r.plan->host_bytes, 4000u);
}

TEST(PlanCopy, HostBytesIsZeroWithoutHostCopies) {
  const PlanResult r = plan_of(parse(document(
      R"({"id": 0, "kind": "memcpy", "deps": [], "copy": {"direction": "DtoD", "src": "0x7f0000000000", "dst": "0x7f0000100000", "bytes": 64}})")));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->host_bytes, 0u);
}

TEST(PlanCopy, WrittenHoldsDeviceDestinationsNotHostOnes) {
  const PlanResult r = plan_of(parse(kCopyTrace));
  ASSERT_TRUE(r.plan) << joined(r);
  // alloc entries count as the whole allocation; the DtoH copy's host destination is nimble's
  // own buffer at replay time, so it is not saved and restored.
  EXPECT_EQ(r.plan->written, (std::vector<MemoryRange>{{0x7f0000000000, 4096}, {0x7f0000100000, 8192}}));
}

TEST(PlanCopy, HtoHCopyIsANopThatWritesNothing) {
  // As the recorder writes it: both ends are host memory outside every allocation.
  const PlanResult r = plan_of(parse(document(R"(
    {"id": 0, "kind": "memcpy", "deps": [],
     "copy": {"direction": "HtoH", "src": "0x560000001000", "dst": "0x560000009000", "bytes": 65536},
     "mem": [{"addr": "0x560000001000", "size": 65536, "mode": "r"},
             {"addr": "0x560000009000", "size": 65536, "mode": "w"}]})")));
  ASSERT_TRUE(r.plan) << joined(r);
  ASSERT_EQ(r.plan->ops.size(), 1u);
  EXPECT_EQ(r.plan->ops[0].kind, OpKind::Nop);
  EXPECT_EQ(r.plan->ops[0].task, 0);
  EXPECT_EQ(r.plan->host_bytes, 0u);  // replay does not copy it, so needs no host buffer for it
  // Replay never touches the program's host memory: nothing to save and restore.
  EXPECT_TRUE(r.plan->written.empty()) << r.plan->written[0];
}

TEST(PlanCopy, ZeroByteCopyIsKept) {
  const PlanResult r = plan_of(parse(document(
      R"({"id": 3, "kind": "memcpy", "deps": [], "copy": {"direction": "DtoD", "src": "0x7f0000000000", "dst": "0x7f0000100000", "bytes": 0}})")));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->ops[0].kind, OpKind::Copy);
  EXPECT_EQ(r.plan->ops[0].copy.bytes, 0u);
}

// ---------------------------------------------------------------------------------------------
// Memsets and syncs

TEST(PlanMemset, OneDimensionalWidthIsBytesOverElementSize) {
  const PlanResult r = plan_of(parse(document(R"(
    {"id": 0, "kind": "memset", "deps": [],
     "memset": {"dst": "0x7f0000000010", "value": 7, "element_size": 2, "bytes": 64}},
    {"id": 1, "kind": "memset", "deps": [],
     "memset": {"dst": "0x7f0000000800", "value": 3735928559, "element_size": 4, "bytes": 4096}},
    {"id": 2, "kind": "memset", "deps": [],
     "memset": {"dst": "0x7f0000001000", "value": 255, "element_size": 1, "bytes": 10}})")));
  ASSERT_TRUE(r.plan) << joined(r);
  const auto& ops = r.plan->ops;
  ASSERT_EQ(ops.size(), 3u);
  for (const Op& op : ops) {
    EXPECT_EQ(op.kind, OpKind::Memset);
    EXPECT_EQ(op.name, "memset");
    EXPECT_EQ(op.memset.height, 1u);
    EXPECT_EQ(op.memset.pitch, 0u);
    EXPECT_FALSE(op.memset.dst_shadow);
  }
  EXPECT_EQ(ops[0].memset.dst, 0x7f0000000010u);
  EXPECT_EQ(ops[0].memset.value, 7u);
  EXPECT_EQ(ops[0].memset.element_size, 2u);
  EXPECT_EQ(ops[0].memset.width, 32u);
  EXPECT_EQ(ops[1].memset.value, 0xdeadbeefu);
  EXPECT_EQ(ops[1].memset.element_size, 4u);
  EXPECT_EQ(ops[1].memset.width, 1024u);
  EXPECT_EQ(ops[2].memset.value, 255u);
  EXPECT_EQ(ops[2].memset.element_size, 1u);
  EXPECT_EQ(ops[2].memset.width, 10u);
}

TEST(PlanMemset, TwoDimensionalKeepsPitchWidthAndHeight) {
  const PlanResult r = plan_of(parse(document(R"(
    {"id": 0, "kind": "memset", "deps": [],
     "memset": {"dst": "0x7f0000000000", "value": 1, "element_size": 4, "bytes": 4096,
                "pitch": 512, "width": 64, "height": 16}})")));
  ASSERT_TRUE(r.plan) << joined(r);
  const MemsetOp& m = r.plan->ops[0].memset;
  EXPECT_EQ(m.dst, 0x7f0000000000u);
  EXPECT_EQ(m.value, 1u);
  EXPECT_EQ(m.element_size, 4u);
  EXPECT_EQ(m.pitch, 512u);
  EXPECT_EQ(m.width, 64u);   // elements per row, as recorded (not bytes / element_size)
  EXPECT_EQ(m.height, 16u);
}

TEST(PlanSync, SyncTaskIsANop) {
  const PlanResult r = plan_of(parse(document(kernel(0, "[]") + R"(,
    {"id": 1, "kind": "sync", "deps": [0], "sync": "stream", "synced_stream": 0},
    {"id": 2, "kind": "sync", "deps": [1], "sync": "context"})")));
  ASSERT_TRUE(r.plan) << joined(r);
  ASSERT_EQ(r.plan->ops.size(), 3u);
  EXPECT_EQ(r.plan->ops[0].kind, OpKind::Kernel);
  EXPECT_EQ(r.plan->ops[1].kind, OpKind::Nop);
  EXPECT_EQ(r.plan->ops[1].name, "sync");
  EXPECT_EQ(r.plan->ops[1].task, 1);
  EXPECT_EQ(r.plan->ops[2].kind, OpKind::Nop);
  // A Nop still carries its dependencies, so graphs built from edges keep the order through it.
  EXPECT_EQ(r.plan->ops[1].deps, (std::vector<std::size_t>{0}));
  EXPECT_EQ(r.plan->ops[2].deps, (std::vector<std::size_t>{1}));
}

TEST(PlanSync, EmptyTraceGivesAnEmptyPlan) {
  const PlanResult r = plan_of(parse(document("")));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_TRUE(r.plan->ops.empty());
  EXPECT_TRUE(r.plan->written.empty());
  EXPECT_EQ(r.plan->streams, 1);
  EXPECT_FALSE(r.plan->scheduled);
}

// ---------------------------------------------------------------------------------------------
// Written memory

TEST(PlanWritten, OnlyWritesMergedAndSorted) {
  const std::string allocations = R"("allocations": [
      {"id": 0, "addr": "0x7f0000200000", "size": 2048, "kind": "device"},
      {"id": 1, "addr": "0x7f0000000000", "size": 1024, "kind": "device"},
      {"id": 2, "addr": "0x7f0000100000", "size": 512, "kind": "device"},
      {"id": 3, "addr": "0x7f0000300000", "size": 64, "kind": "host"}])";
  const PlanResult r = plan_of(parse(document(
      // Reads only: nothing written.
      kernel(0, "[]", R"("mem": [{"alloc": 2, "offset": 0, "size": 512, "mode": "r"}])") + ",\n" +
          // A partial write of allocation 0 counts as the whole allocation; written twice, once.
          kernel(1, "[]", R"("mem": [{"alloc": 0, "offset": 16, "size": 16, "mode": "w"}])") + ",\n" +
          kernel(2, "[1]", R"("mem": [{"alloc": 0, "offset": 0, "size": 2048, "mode": "rw"},
                                      {"alloc": 1, "offset": 0, "size": 8, "mode": "w"}])") + ",\n" +
          // Host allocations are never saved and restored.
          kernel(3, "[]", R"("mem": [{"alloc": 3, "offset": 0, "size": 64, "mode": "rw"}])") + ",\n" +
          // Untracked ranges: overlapping ones merge, ones that only touch stay apart.
          R"({"id": 4, "kind": "memset", "deps": [], "memset": {"dst": "0x7e0000000000", "value": 0, "element_size": 1, "bytes": 256},
              "mem": [{"addr": "0x7e0000000000", "size": 256, "mode": "w"}]},
             {"id": 5, "kind": "memset", "deps": [4], "memset": {"dst": "0x7e0000000080", "value": 0, "element_size": 1, "bytes": 256},
              "mem": [{"addr": "0x7e0000000080", "size": 256, "mode": "w"}]},
             {"id": 6, "kind": "memset", "deps": [5], "memset": {"dst": "0x7e0000000180", "value": 0, "element_size": 1, "bytes": 16},
              "mem": [{"addr": "0x7e0000000180", "size": 16, "mode": "w"}]},
             {"id": 7, "kind": "memset", "deps": [], "memset": {"dst": "0x7e0000010000", "value": 0, "element_size": 1, "bytes": 0},
              "mem": [{"addr": "0x7e0000010000", "size": 0, "mode": "w"}]},
             {"id": 8, "kind": "memcpy", "deps": [], "copy": {"direction": "DtoD", "src": "0x7d0000000000", "dst": "0x7f0000100000", "bytes": 16},
              "mem": [{"addr": "0x7d0000000000", "size": 16, "mode": "r"}, {"alloc": 2, "offset": 0, "size": 16, "mode": "rw"}]})",
      allocations)));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->written, (std::vector<MemoryRange>{{0x7e0000000000, 0x180},  // 0..256 and 0x80..0x180
                                                       {0x7e0000000180, 16},     // touches: kept apart
                                                       {0x7f0000000000, 1024},
                                                       {0x7f0000100000, 512},
                                                       {0x7f0000200000, 2048}}));
  // Only kernel 3 touches page-locked host memory (a library call issuing it is never skipped).
  for (std::size_t i = 0; i < r.plan->ops.size(); ++i) EXPECT_EQ(r.plan->ops[i].touches_host_memory, i == 3) << i;
}

TEST(PlanWritten, ModeDefaultsToReadWrite) {
  // The validator requires "mode"; build_plan treats a missing one as a write, to be safe.
  auto trace = parse(document(kernel(0, "[]", R"("mem": [{"alloc": 0, "offset": 0, "size": 64, "mode": "r"}])"),
                              R"("allocations": [{"id": 0, "addr": "0x7f0000000000", "size": 64, "kind": "device"}])"));
  trace.tasks[0].extra["mem"][0].erase("mode");
  const PlanResult r = plan_of(trace);
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->written, (std::vector<MemoryRange>{{0x7f0000000000, 64}}));
}

// ---------------------------------------------------------------------------------------------
// Allocations freed during the iteration: redirected to shadows

const char* const kFreedAllocations = R"("allocations": [
    {"id": 0, "addr": "0x7f0000000000", "size": 4096, "kind": "device"},
    {"id": 1, "addr": "0x7f0000100000", "size": 2048, "kind": "async", "allocated_before_task": 0, "freed": true, "freed_before_task": 3},
    {"id": 2, "addr": "0x7f0000200000", "size": 300, "kind": "async", "freed": true, "freed_before_task": 3}])";

TEST(PlanFreed, KernelPointerIntoAFreedAllocationIsRewrittenToAShadow) {
  const PlanResult r = plan_of(parse(document(R"(
    {"id": 0, "kind": "kernel", "deps": [], "function": "0x1000",
     "launch": {"grid": [1, 1, 1], "block": [32, 1, 1]},
     "args": {"bytes": "00000000007f000000011000007f0000",
              "params": [{"offset": 0, "size": 8}, {"offset": 8, "size": 8}],
              "pointers": [{"offset": 0, "alloc": 0, "alloc_offset": 0},
                           {"offset": 8, "alloc": 1, "alloc_offset": 256}]},
     "mem": [{"alloc": 0, "offset": 0, "size": 4096, "mode": "r"},
             {"alloc": 1, "offset": 0, "size": 2048, "mode": "rw"}]})",
                                              kFreedAllocations)));
  ASSERT_TRUE(r.plan) << joined(r);
  const KernelOp& k = r.plan->ops[0].kernel;
  ASSERT_EQ(k.pointer_fixes.size(), 1u);  // only the freed allocation's pointer
  EXPECT_EQ(k.pointer_fixes[0].arg_offset, 8u);
  EXPECT_EQ(k.pointer_fixes[0].target.shadow, 0u);
  EXPECT_EQ(k.pointer_fixes[0].target.offset, 256u);
  EXPECT_EQ(r.plan->shadow_sizes, (std::vector<std::uint64_t>{2048}));
  // The freed allocation is no longer the program's: not saved or restored.
  EXPECT_TRUE(r.plan->written.empty());
}

TEST(PlanFreed, CopiesAndMemsetsIntoFreedAllocationsUseShadowsNumberedAsFirstMet) {
  const PlanResult r = plan_of(parse(document(R"(
    {"id": 0, "kind": "memset", "deps": [],
     "memset": {"dst": "0x7f0000200010", "value": 0, "element_size": 4, "bytes": 64},
     "mem": [{"alloc": 2, "offset": 16, "size": 64, "mode": "w"}]},
    {"id": 1, "kind": "memcpy", "deps": [],
     "copy": {"direction": "DtoD", "src": "0x7f0000100040", "dst": "0x7f0000000000", "bytes": 128},
     "mem": [{"alloc": 1, "offset": 64, "size": 128, "mode": "r"}, {"alloc": 0, "offset": 0, "size": 128, "mode": "w"}]},
    {"id": 2, "kind": "memcpy", "deps": [0],
     "copy": {"direction": "DtoH", "src": "0x7f0000200010", "dst": "0x560000000000", "bytes": 64},
     "mem": [{"alloc": 2, "offset": 16, "size": 64, "mode": "r"}, {"addr": "0x560000000000", "size": 64, "mode": "w"}]},
    {"id": 3, "kind": "memcpy", "deps": [1],
     "copy": {"direction": "HtoD", "src": "0x560000001000", "dst": "0x7f0000100000", "bytes": 32},
     "mem": [{"addr": "0x560000001000", "size": 32, "mode": "r"}, {"alloc": 1, "offset": 0, "size": 32, "mode": "w"}]})",
                                              kFreedAllocations)));
  ASSERT_TRUE(r.plan) << joined(r);
  const auto& ops = r.plan->ops;
  // Allocation 2 is met first (task 0): shadow 0; allocation 1 second: shadow 1.
  EXPECT_EQ(r.plan->shadow_sizes, (std::vector<std::uint64_t>{300, 2048}));
  ASSERT_TRUE(ops[0].memset.dst_shadow);
  EXPECT_EQ(ops[0].memset.dst_shadow->shadow, 0u);
  EXPECT_EQ(ops[0].memset.dst_shadow->offset, 16u);

  ASSERT_TRUE(ops[1].copy.src_shadow);
  EXPECT_EQ(ops[1].copy.src_shadow->shadow, 1u);
  EXPECT_EQ(ops[1].copy.src_shadow->offset, 64u);
  EXPECT_FALSE(ops[1].copy.dst_shadow);  // allocation 0 is live

  ASSERT_TRUE(ops[2].copy.src_shadow);
  EXPECT_EQ(ops[2].copy.src_shadow->shadow, 0u);
  EXPECT_FALSE(ops[2].copy.dst_shadow);  // the host end

  ASSERT_TRUE(ops[3].copy.dst_shadow);
  EXPECT_EQ(ops[3].copy.dst_shadow->shadow, 1u);
  EXPECT_EQ(ops[3].copy.dst_shadow->offset, 0u);
  EXPECT_FALSE(ops[3].copy.src_shadow);

  EXPECT_EQ(r.plan->written, (std::vector<MemoryRange>{{0x7f0000000000, 4096}}));

  // nimble run's plan: kernels keep the program's own addresses, copies and memsets their shadows.
  const ReplayPlan own = with_program_pointers(*r.plan);
  EXPECT_EQ(own.shadow_sizes, r.plan->shadow_sizes);
  EXPECT_TRUE(own.ops[0].memset.dst_shadow);
  EXPECT_TRUE(own.ops[1].copy.src_shadow);
}

TEST(PlanFreed, NimbleRunsPlanGivesKernelsTheProgramsPointers) {
  const PlanResult r = plan_of(parse(document(R"(
    {"id": 0, "kind": "kernel", "deps": [], "function": "0x1000",
     "launch": {"grid": [1, 1, 1], "block": [32, 1, 1]},
     "args": {"bytes": "00011000007f0000", "params": [{"offset": 0, "size": 8}],
              "pointers": [{"offset": 0, "alloc": 1, "alloc_offset": 256}]},
     "mem": [{"alloc": 1, "offset": 0, "size": 2048, "mode": "rw"}]})",
                                              kFreedAllocations)));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->ops[0].kernel.pointer_fixes.size(), 1u);
  EXPECT_TRUE(with_program_pointers(*r.plan).ops[0].kernel.pointer_fixes.empty());
}


// Two temporaries allocated inside the iteration: one written then read by tasks 0 and 1, the
// other by tasks 2 and 3. Chained by dependencies they share shadow memory; without the
// dependency between task 1 and task 2 they could run at once and get a slot each.
std::string temporaries(const char* deps_of_2) {
  const std::string allocations = R"("allocations": [
    {"id": 1, "addr": "0x7f0000100000", "size": 2048, "kind": "async", "allocated_before_task": 0, "freed": true, "freed_before_task": 2},
    {"id": 2, "addr": "0x7f0000100000", "size": 1024, "kind": "async", "allocated_before_task": 2, "freed": true, "freed_before_task": 4}])";
  auto memset = [](int id, const std::string& deps, int alloc) {
    return R"({"id": )" + std::to_string(id) + R"(, "kind": "memset", "deps": )" + deps +
           R"(, "memset": {"dst": "0x7f0000100000", "value": 0, "element_size": 1, "bytes": 64}, "mem": [{"alloc": )" +
           std::to_string(alloc) + R"(, "offset": 0, "size": 64, "mode": "w"}]})";
  };
  return document(memset(0, "[]", 1) + ",\n" + memset(1, "[0]", 1) + ",\n" + memset(2, deps_of_2, 2) + ",\n" +
                      memset(3, "[2]", 2),
                  allocations);
}

TEST(PlanFreed, TemporariesOrderedByDependenciesShareShadowMemory) {
  const PlanResult chained = plan_of(parse(temporaries("[1]")));
  ASSERT_TRUE(chained.plan) << joined(chained);
  EXPECT_EQ(chained.plan->shadow_sizes, (std::vector<std::uint64_t>{2048, 1024}));
  EXPECT_EQ(chained.plan->shadow_offsets, (std::vector<std::uint64_t>{0, 0}));
  EXPECT_EQ(chained.plan->shadow_bytes, 2048u);
  EXPECT_EQ(chained.plan->shadows_reused, 1u);

  const PlanResult independent = plan_of(parse(temporaries("[]")));
  ASSERT_TRUE(independent.plan) << joined(independent);
  EXPECT_EQ(independent.plan->shadow_offsets, (std::vector<std::uint64_t>{0, 2048}));
  EXPECT_EQ(independent.plan->shadow_bytes, 2048u + 1024u);
  EXPECT_EQ(independent.plan->shadows_reused, 0u);
}

}  // namespace
}  // namespace nimble::replayer
