// Replayer and run_bench against a fake driver: every entry point is a stub that logs its call
// (name, stream, key arguments) and succeeds, so the order and arguments of the driver calls of
// each backend can be checked without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nimble/replayer/bench.hpp"
#include "nimble/replayer/launch_diagnosis.hpp"
#include "nimble/replayer/replay.hpp"
#include "nimble/replayer/run_executor.hpp"
#include "call_trace.hpp"
#include "test_util.hpp"

namespace nimble::replayer {
namespace {

using test::document;
using test::joined;
using test::kernel;
using test::parse;
using test::plan_of;

// ---------------------------------------------------------------------------------------------
// The fake driver

struct Call {
  std::string name;
  CUstream stream = nullptr;
  std::vector<std::uint64_t> args;     // key arguments, per call kind (see the stubs)
  std::vector<CUgraphNode> nodes;      // cuStreamUpdateCaptureDependencies
  std::vector<std::uint8_t> param0;    // cuLaunchKernelEx: the first parameter's 8 bytes
};

std::vector<Call> g_log;
std::uintptr_t g_next_handle = 0x1000;
std::uint64_t g_next_device = 0xd00000000000;
std::vector<void*> g_host_allocs;
CUresult g_launch_result = CUDA_SUCCESS;
// Launches of this handle fail with CUDA_ERROR_INVALID_VALUE.
std::uintptr_t g_rejected_handle = 0;
int g_instantiations_left = -1;  // cuGraphInstantiate succeeds this many more times (-1: always)
// Reads (cuMemcpyDtoH) of the range at g_perturbed_addr return different bytes from the
// g_perturb_from-th read on (0 = never): a nondeterministic kernel, or a replay that differs.
std::uint64_t g_perturbed_addr = 0;
int g_perturb_from = 0;
int g_perturbed_reads = 0;
constexpr std::uintptr_t kResolvedOffset = 0x100000;  // cuKernelGetFunction: handle + this
const char* g_missing = nullptr;  // the lookup returns nullptr for this name

template <typename T>
T fresh() {
  return reinterpret_cast<T>(g_next_handle++);
}
std::uint64_t u(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
void record(const char* name, CUstream s, std::vector<std::uint64_t> args = {}) { g_log.push_back({name, s, std::move(args), {}, {}}); }

DriverApi make_fake() {
  DriverApi a;
  a.stream_create = [](CUstream* s, unsigned) { *s = fresh<CUstream>(); record("cuStreamCreate", *s); return CUDA_SUCCESS; };
  a.stream_destroy = [](CUstream s) { record("cuStreamDestroy", s); return CUDA_SUCCESS; };
  a.stream_synchronize = [](CUstream s) { record("cuStreamSynchronize", s); return CUDA_SUCCESS; };
  a.stream_wait_event = [](CUstream s, CUevent e, unsigned) { record("cuStreamWaitEvent", s, {u(e)}); return CUDA_SUCCESS; };
  a.event_create = [](CUevent* e, unsigned) { *e = fresh<CUevent>(); record("cuEventCreate", nullptr, {u(*e)}); return CUDA_SUCCESS; };
  a.event_destroy = [](CUevent e) { record("cuEventDestroy", nullptr, {u(e)}); return CUDA_SUCCESS; };
  a.event_record = [](CUevent e, CUstream s) { record("cuEventRecord", s, {u(e)}); return CUDA_SUCCESS; };
  a.event_synchronize = [](CUevent e) { record("cuEventSynchronize", nullptr, {u(e)}); return CUDA_SUCCESS; };
  a.event_elapsed_time = [](float* ms, CUevent, CUevent) { *ms = 1.5f; record("cuEventElapsedTime", nullptr); return CUDA_SUCCESS; };
  a.ctx_synchronize = [] { record("cuCtxSynchronize", nullptr); return CUDA_SUCCESS; };
  a.begin_capture = [](CUstream s, CUstreamCaptureMode) { record("cuStreamBeginCapture", s); return CUDA_SUCCESS; };
  a.end_capture = [](CUstream s, CUgraph* g) { *g = fresh<CUgraph>(); record("cuStreamEndCapture", s, {u(*g)}); return CUDA_SUCCESS; };
  a.capture_info = [](CUstream s, CUstreamCaptureStatus* status, cuuint64_t*, CUgraph*, const CUgraphNode** deps,
                      const CUgraphEdgeData**, std::size_t* count) {
    static std::vector<CUgraphNode> last;  // one fresh node per call, alive until the next call
    last = {fresh<CUgraphNode>()};
    if (status) *status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (deps) *deps = last.data();
    if (count) *count = last.size();
    record("cuStreamGetCaptureInfo", s, {u(last[0])});
    return CUDA_SUCCESS;
  };
  a.update_capture_deps = [](CUstream s, CUgraphNode* deps, const CUgraphEdgeData*, std::size_t n, unsigned flags) {
    Call c{"cuStreamUpdateCaptureDependencies", s, {flags}, std::vector<CUgraphNode>(deps, deps + n), {}};
    g_log.push_back(std::move(c));
    return CUDA_SUCCESS;
  };
  a.graph_instantiate = [](CUgraphExec* e, CUgraph g, unsigned long long) {
    if (g_instantiations_left == 0) {
      record("cuGraphInstantiateWithFlags (refused)", nullptr, {u(g)});
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (g_instantiations_left > 0) --g_instantiations_left;
    *e = fresh<CUgraphExec>();
    record("cuGraphInstantiateWithFlags", nullptr, {u(*e), u(g)});
    return CUDA_SUCCESS;
  };
  a.graph_launch = [](CUgraphExec e, CUstream s) { record("cuGraphLaunch", s, {u(e)}); return CUDA_SUCCESS; };
  a.graph_exec_destroy = [](CUgraphExec e) { record("cuGraphExecDestroy", nullptr, {u(e)}); return CUDA_SUCCESS; };
  a.graph_destroy = [](CUgraph g) { record("cuGraphDestroy", nullptr, {u(g)}); return CUDA_SUCCESS; };
  a.graph_get_nodes = [](CUgraph g, CUgraphNode*, std::size_t* n) { *n = 7; record("cuGraphGetNodes", nullptr, {u(g)}); return CUDA_SUCCESS; };
  a.launch_kernel_ex = [](const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
    Call c{"cuLaunchKernelEx", config->hStream, {u(f), config->gridDimX, config->blockDimX, u(extra)}, {}, {}};
    if (params && params[0]) {
      const auto* p = static_cast<const std::uint8_t*>(params[0]);
      c.param0.assign(p, p + 8);
    }
    g_log.push_back(std::move(c));
    return u(f) == g_rejected_handle ? CUDA_ERROR_INVALID_VALUE : g_launch_result;
  };
  // Launches without attributes use the plain cuLaunchKernel, as the program mostly did.
  a.launch_kernel = [](CUfunction f, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned, unsigned,
                       CUstream s, void** params, void** extra) {
    Call c{"cuLaunchKernel", s, {u(f), gx, bx, u(extra)}, {}, {}};
    if (params && params[0]) {
      const auto* p = static_cast<const std::uint8_t*>(params[0]);
      c.param0.assign(p, p + 8);
    }
    g_log.push_back(std::move(c));
    return u(f) == g_rejected_handle ? CUDA_ERROR_INVALID_VALUE : g_launch_result;
  };
  a.memcpy_htod_async = [](CUdeviceptr dst, const void* src, std::size_t n, CUstream s) {
    record("cuMemcpyHtoDAsync", s, {dst, u(src), n});
    return CUDA_SUCCESS;
  };
  a.memcpy_dtoh_async = [](void* dst, CUdeviceptr src, std::size_t n, CUstream s) {
    record("cuMemcpyDtoHAsync", s, {u(dst), src, n});
    return CUDA_SUCCESS;
  };
  a.memcpy_dtod_async = [](CUdeviceptr dst, CUdeviceptr src, std::size_t n, CUstream s) {
    record("cuMemcpyDtoDAsync", s, {dst, src, n});
    return CUDA_SUCCESS;
  };
  a.memcpy_dtoh = [](void* dst, CUdeviceptr src, std::size_t n) {
    auto* bytes = static_cast<std::uint8_t*>(dst);
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::uint8_t>((src + i) * 31);
    if (g_perturbed_addr != 0 && src == g_perturbed_addr && ++g_perturbed_reads >= g_perturb_from && g_perturb_from > 0) {
      bytes[0] = static_cast<std::uint8_t>(bytes[0] + g_perturbed_reads);
    }
    record("cuMemcpyDtoH", nullptr, {u(dst), src, n});
    return CUDA_SUCCESS;
  };
  a.memset_d8_async = [](CUdeviceptr d, unsigned char v, std::size_t n, CUstream s) { record("cuMemsetD8Async", s, {d, v, n}); return CUDA_SUCCESS; };
  a.memset_d16_async = [](CUdeviceptr d, unsigned short v, std::size_t n, CUstream s) { record("cuMemsetD16Async", s, {d, v, n}); return CUDA_SUCCESS; };
  a.memset_d32_async = [](CUdeviceptr d, unsigned v, std::size_t n, CUstream s) { record("cuMemsetD32Async", s, {d, v, n}); return CUDA_SUCCESS; };
  a.memset_d2d8_async = [](CUdeviceptr d, std::size_t, unsigned char, std::size_t, std::size_t, CUstream s) { record("cuMemsetD2D8Async", s, {d}); return CUDA_SUCCESS; };
  a.memset_d2d16_async = [](CUdeviceptr d, std::size_t, unsigned short, std::size_t, std::size_t, CUstream s) { record("cuMemsetD2D16Async", s, {d}); return CUDA_SUCCESS; };
  a.memset_d2d32_async = [](CUdeviceptr d, std::size_t, unsigned, std::size_t, std::size_t, CUstream s) { record("cuMemsetD2D32Async", s, {d}); return CUDA_SUCCESS; };
  a.mem_alloc = [](CUdeviceptr* d, std::size_t n) {
    *d = g_next_device;
    g_next_device += (n + 0xffff) / 0x10000 * 0x10000;
    record("cuMemAlloc", nullptr, {*d, n});
    return CUDA_SUCCESS;
  };
  a.mem_free = [](CUdeviceptr d) { record("cuMemFree", nullptr, {d}); return CUDA_SUCCESS; };
  a.mem_alloc_host = [](void** p, std::size_t n) {
    *p = std::malloc(n);
    g_host_allocs.push_back(*p);
    record("cuMemAllocHost", nullptr, {u(*p), n});
    return CUDA_SUCCESS;
  };
  a.mem_free_host = [](void* p) { record("cuMemFreeHost", nullptr, {u(p)}); std::free(p); return CUDA_SUCCESS; };
  a.mem_get_info = [](std::size_t* free, std::size_t* total) {
    *free = std::size_t{64} << 30;
    *total = std::size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  a.get_error_name = [](CUresult r, const char** name) {
    *name = r == CUDA_ERROR_LAUNCH_FAILED ? "CUDA_ERROR_LAUNCH_FAILED"
            : r == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
  };
  a.ctx_get_device = [](CUdevice* d) { *d = 3; return CUDA_SUCCESS; };
  a.ctx_get_current = [](CUcontext* c) { *c = reinterpret_cast<CUcontext>(0x77); return CUDA_SUCCESS; };
  a.ctx_set_current = [](CUcontext c) { return c == reinterpret_cast<CUcontext>(0x77) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; };
  a.pointer_get_attribute = [](void*, CUpointer_attribute, CUdeviceptr) { return CUDA_ERROR_INVALID_VALUE; };
  // Graph node parameters: the node's recorded form, then what nimble run writes into the exec
  // (for a kernel, the 8 bytes of its second parameter: the seed of the run tests' kernel).
  a.graph_kernel_node_get_params = [](CUgraphNode n, CUDA_KERNEL_NODE_PARAMS* p) {
    *p = CUDA_KERNEL_NODE_PARAMS{};
    p->func = reinterpret_cast<CUfunction>(0x1000);
    record("cuGraphKernelNodeGetParams", nullptr, {u(n)});
    return CUDA_SUCCESS;
  };
  a.graph_exec_kernel_node_set_params = [](CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS* p) {
    std::uint64_t second = 0;
    if (p->kernelParams && p->kernelParams[1]) std::memcpy(&second, p->kernelParams[1], 8);
    record("cuGraphExecKernelNodeSetParams", nullptr, {u(e), u(n), second});
    return CUDA_SUCCESS;
  };
  a.graph_memcpy_node_get_params = [](CUgraphNode n, CUDA_MEMCPY3D* p) {
    *p = CUDA_MEMCPY3D{};
    record("cuGraphMemcpyNodeGetParams", nullptr, {u(n)});
    return CUDA_SUCCESS;
  };
  a.graph_exec_memcpy_node_set_params = [](CUgraphExec e, CUgraphNode n, const CUDA_MEMCPY3D* p, CUcontext) {
    record("cuGraphExecMemcpyNodeSetParams", nullptr, {u(e), u(n), p->srcDevice, p->dstDevice});
    return CUDA_SUCCESS;
  };
  a.graph_memset_node_get_params = [](CUgraphNode n, CUDA_MEMSET_NODE_PARAMS* p) {
    *p = CUDA_MEMSET_NODE_PARAMS{};
    p->value = 7;
    record("cuGraphMemsetNodeGetParams", nullptr, {u(n)});
    return CUDA_SUCCESS;
  };
  a.graph_exec_memset_node_set_params = [](CUgraphExec e, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS* p, CUcontext c) {
    record("cuGraphExecMemsetNodeSetParams", nullptr, {u(e), u(n), p->value, u(c), p->dst});
    return CUDA_SUCCESS;
  };
  // Attribute values: 1000 + the attribute's number, so a message shows which was asked.
  a.func_get_attribute = [](int* v, CUfunction_attribute attr, CUfunction) { *v = 1000 + attr; return CUDA_SUCCESS; };
  a.kernel_get_attribute = [](int* v, CUfunction_attribute attr, CUkernel, CUdevice d) {
    *v = 2000 + attr + 100 * d;
    return CUDA_SUCCESS;
  };
  a.func_set_attribute = [](CUfunction f, CUfunction_attribute attr, int v) {
    record("cuFuncSetAttribute", nullptr, {u(f), static_cast<std::uint64_t>(attr), static_cast<std::uint64_t>(v)});
    return CUDA_SUCCESS;
  };
  a.kernel_set_attribute = [](CUfunction_attribute attr, int v, CUkernel k, CUdevice d) {
    record("cuKernelSetAttribute", nullptr, {u(k), static_cast<std::uint64_t>(attr), static_cast<std::uint64_t>(v),
                                             static_cast<std::uint64_t>(d)});
    return CUDA_SUCCESS;
  };
  return a;
}

const DriverApi g_fake = make_fake();

void* lookup(const char* name, int) {
  if (g_missing && std::strcmp(name, g_missing) == 0) return nullptr;
#define NIMBLE_TEST_LOOKUP(field, n, version, pfn) \
  if (std::strcmp(name, n) == 0) return reinterpret_cast<void*>(g_fake.field);
  NIMBLE_REPLAY_DRIVER_FUNCTIONS(NIMBLE_TEST_LOOKUP)
#undef NIMBLE_TEST_LOOKUP
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// The trace: a HtoD copy and a memset, two independent kernels on streams 0 and 1, and a third
// kernel joining them. Kernel 40's pointer lands in allocation 2, freed during the iteration.

constexpr std::uint64_t kHostSrc = 0x560000001000;

std::string scheduled_trace() {
  const std::string allocations = R"("allocations": [
    {"id": 0, "addr": "0x7f0000000000", "size": 4096, "kind": "device"},
    {"id": 1, "addr": "0x7f0000100000", "size": 2048, "kind": "device"},
    {"id": 2, "addr": "0x7f0000200000", "size": 512, "kind": "async", "allocated_before_task": 10, "freed": true, "freed_before_task": 50}],
  "schedule": {"algorithm": "by-hand", "streams": 2, "syncs": 0})";
  return document(
      R"({"id": 10, "kind": "memcpy", "deps": [],
          "copy": {"direction": "HtoD", "src": "0x560000001000", "dst": "0x7f0000000000", "bytes": 256},
          "mem": [{"addr": "0x560000001000", "size": 256, "mode": "r"}, {"alloc": 0, "offset": 0, "size": 256, "mode": "w"}],
          "schedule": {"stream": 0, "waits": []}},
         {"id": 20, "kind": "memset", "deps": [],
          "memset": {"dst": "0x7f0000100000", "value": 7, "element_size": 4, "bytes": 1024},
          "mem": [{"alloc": 1, "offset": 0, "size": 1024, "mode": "w"}],
          "schedule": {"stream": 1, "waits": []}},
)" + kernel(30, "[10]", R"("mem": [{"alloc": 0, "offset": 0, "size": 4096, "mode": "rw"}], "schedule": {"stream": 0, "waits": []})") +
          R"(,
         {"id": 40, "kind": "kernel", "deps": [20], "name": "k40", "function": "0x1028",
          "launch": {"grid": [2, 1, 1], "block": [64, 1, 1]},
          "args": {"bytes": "10002000007f0000", "params": [{"offset": 0, "size": 8}],
                   "pointers": [{"offset": 0, "alloc": 2, "alloc_offset": 16}]},
          "mem": [{"alloc": 1, "offset": 0, "size": 1024, "mode": "r"}, {"alloc": 2, "offset": 0, "size": 512, "mode": "rw"}],
          "schedule": {"stream": 1, "waits": []}},
)" + kernel(50, "[30, 40]", R"("mem": [{"alloc": 0, "offset": 0, "size": 4096, "mode": "rw"}], "schedule": {"stream": 0, "waits": [40]})"),
      allocations);
}

class ReplayStub : public ::testing::Test {
 protected:
  void SetUp() override {
    g_log.clear();
    g_host_allocs.clear();
    g_launch_result = CUDA_SUCCESS;
    g_rejected_handle = 0;
    g_instantiations_left = -1;
    g_perturbed_addr = 0;
    g_perturb_from = 0;
    g_perturbed_reads = 0;
    g_missing = nullptr;
    std::string missing;
    ASSERT_TRUE(load_driver_api(lookup, api_, &missing)) << missing;
    trace_ = parse(scheduled_trace());
    PlanResult r = plan_of(trace_);
    ASSERT_TRUE(r.plan) << joined(r);
    plan_ = std::move(*r.plan);
    ASSERT_EQ(plan_.ops.size(), 5u);
  }
  void TearDown() override {
    g_launch_result = CUDA_SUCCESS;
    g_rejected_handle = 0;
  }

  // The calls logged from `from` on that are GPU work or ordering (no creation/teardown).
  static std::vector<std::string> names(std::size_t from = 0) {
    std::vector<std::string> out;
    for (std::size_t i = from; i < g_log.size(); ++i) out.push_back(g_log[i].name);
    return out;
  }
  static std::vector<Call> calls_named(const std::string& name) {
    std::vector<Call> out;
    for (const Call& c : g_log) if (c.name == name) out.push_back(c);
    return out;
  }

  DriverApi api_;
  trace::Trace trace_;
  ReplayPlan plan_;
};

std::uint64_t fn(long id) { return 0x1000 + id; }

// Eager replay that must fail: the ReplayError's message.
std::string eager_replay_error(Replayer& replayer) {
  try {
    replayer.issue_eager();
  } catch (const ReplayError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ReplayError";
  return "";
}

TEST_F(ReplayStub, PlanHasTheExpectedShape) {
  EXPECT_TRUE(plan_.scheduled);
  EXPECT_EQ(plan_.streams, 2);
  EXPECT_EQ(plan_.shadow_sizes, (std::vector<std::uint64_t>{512}));
  EXPECT_EQ(plan_.ops[4].deps, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(plan_.ops[4].waits, (std::vector<std::size_t>{3}));
}

// The bench refuses collectives, one line each naming the op; other kernels are fine.
TEST_F(ReplayStub, BenchRefusesCollectivesNamingEach) {
  EXPECT_TRUE(bench_refusals(plan_).empty());
  ReplayPlan plan = plan_;
  plan.ops[2].name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  ASSERT_EQ(plan.ops[2].kind, OpKind::Kernel);
  const std::vector<std::string> refusals = bench_refusals(plan);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].rfind(describe_op(plan.ops[2]), 0), 0u) << refusals[0];
  EXPECT_NE(refusals[0].find("NCCL collective"), std::string::npos) << refusals[0];
  EXPECT_TRUE(is_collective(plan.ops[2]));
  plan.ops[2].name = "my_nccl_like_kernel";
  EXPECT_FALSE(is_collective(plan.ops[2]));
}

TEST_F(ReplayStub, EagerIssuesEveryOpInOrderOnTheMainStream) {
  Replayer replayer(api_, plan_);
  const std::size_t start = g_log.size();
  replayer.issue_eager();
  EXPECT_EQ(names(start), (std::vector<std::string>{"cuMemcpyHtoDAsync", "cuMemsetD32Async", "cuLaunchKernel",
                                                    "cuLaunchKernel", "cuLaunchKernel"}));
  for (std::size_t i = start; i < g_log.size(); ++i) EXPECT_EQ(g_log[i].stream, replayer.main_stream()) << g_log[i].name;
  const auto launches = calls_named("cuLaunchKernel");
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].args[0], fn(30));
  EXPECT_EQ(launches[1].args[0], fn(40));
  EXPECT_EQ(launches[2].args[0], fn(50));
  EXPECT_EQ(launches[1].args[1], 2u);   // grid
  EXPECT_EQ(launches[1].args[2], 64u);  // block
  EXPECT_EQ(launches[1].args[3], 0u);   // parameters as kernelParams, not extra
  const Call memset = calls_named("cuMemsetD32Async").at(0);
  EXPECT_EQ(memset.args, (std::vector<std::uint64_t>{0x7f0000100000, 7, 256}));
}

TEST_F(ReplayStub, HtoDCopyReadsNimblesOwnHostBuffer) {
  Replayer replayer(api_, plan_);
  replayer.issue_eager();
  const Call copy = calls_named("cuMemcpyHtoDAsync").at(0);
  EXPECT_EQ(copy.args[0], 0x7f0000000000u);
  EXPECT_NE(copy.args[1], kHostSrc);
  std::set<std::uint64_t> host;
  for (void* p : g_host_allocs) host.insert(u(p));
  EXPECT_TRUE(host.count(copy.args[1])) << "the source is one of the cuMemAllocHost buffers";
  EXPECT_EQ(copy.args[2], 256u);
  for (const Call& c : calls_named("cuMemAllocHost")) EXPECT_GE(c.args[1], 256u);
}

TEST_F(ReplayStub, KernelPointerIntoAFreedAllocationIsPatchedToTheShadow) {
  Replayer replayer(api_, plan_);
  const MemoryRange shadow = replayer.shadow_memory();
  EXPECT_GE(shadow.size, 512u);
  ASSERT_NE(shadow.addr, 0u);
  replayer.issue_eager();
  const auto launches = calls_named("cuLaunchKernel");
  ASSERT_EQ(launches.size(), 3u);
  std::uint64_t value = 0;
  ASSERT_EQ(launches[1].param0.size(), 8u);
  std::memcpy(&value, launches[1].param0.data(), 8);
  EXPECT_EQ(value, shadow.addr + 16);
  // A kernel without pointer fixes gets its recorded bytes.
  ASSERT_EQ(launches[0].param0.size(), 8u);
  std::memcpy(&value, launches[0].param0.data(), 8);
  EXPECT_EQ(value, 0x0000000200000001u);
  // The plan itself is unchanged.
  std::memcpy(&value, plan_.ops[3].kernel.args.data(), 8);
  EXPECT_EQ(value, 0x7f0000200010u);
}

TEST_F(ReplayStub, StreamGraphCapturesTheScheduleStreamsAndWaits) {
  Replayer replayer(api_, plan_);
  std::vector<CUstream> streams;
  for (const Call& c : calls_named("cuStreamCreate")) streams.push_back(c.stream);
  ASSERT_EQ(streams.size(), 2u);
  const CUstream s0 = streams[0], s1 = streams[1];
  EXPECT_EQ(replayer.main_stream(), s0);
  const std::size_t start = g_log.size();
  std::size_t nodes = 0;
  EXPECT_NE(replayer.instantiate(Backend::StreamGraph, &nodes), nullptr);
  EXPECT_EQ(nodes, 7u);
  std::vector<std::pair<std::string, CUstream>> got;
  for (std::size_t i = start; i < g_log.size(); ++i) got.push_back({g_log[i].name, g_log[i].stream});
  const std::vector<std::pair<std::string, CUstream>> expected = {
      {"cuStreamBeginCapture", s0},
      {"cuEventRecord", s0},        // fork
      {"cuStreamWaitEvent", s1},
      {"cuMemcpyHtoDAsync", s0},    // task 10
      {"cuMemsetD32Async", s1},     // task 20
      {"cuLaunchKernel", s0},     // task 30
      {"cuLaunchKernel", s1},     // task 40
      {"cuEventRecord", s1},        // task 50 waits for it
      {"cuStreamWaitEvent", s0},    // the schedule's wait
      {"cuLaunchKernel", s0},     // task 50
      {"cuEventRecord", s1},        // join
      {"cuStreamWaitEvent", s0},
      {"cuStreamEndCapture", s0},
      {"cuGraphInstantiateWithFlags", nullptr},
      {"cuGraphGetNodes", nullptr},  // the node count, for the report
  };
  ASSERT_EQ(got, expected);
  const auto at = [&](std::size_t i) { return g_log[start + i]; };
  EXPECT_EQ(at(1).args[0], at(2).args[0]) << "fork: stream 1 waits for the event stream 0 records";
  EXPECT_EQ(at(7).args[0], at(8).args[0]) << "task 50 waits for the event recorded after task 40";
  EXPECT_EQ(at(10).args[0], at(11).args[0]) << "join: stream 0 waits for the event stream 1 records";
  EXPECT_NE(at(1).args[0], at(7).args[0]);
  EXPECT_NE(at(7).args[0], at(10).args[0]);
  EXPECT_EQ(at(5).args[0], fn(30));
  EXPECT_EQ(at(6).args[0], fn(40));
  EXPECT_EQ(at(9).args[0], fn(50));
}

TEST_F(ReplayStub, SingleStreamGraphCapturesInIssueOrder) {
  Replayer replayer(api_, plan_);
  const std::size_t start = g_log.size();
  replayer.instantiate(Backend::Graph);
  EXPECT_EQ(names(start), (std::vector<std::string>{"cuStreamBeginCapture", "cuMemcpyHtoDAsync", "cuMemsetD32Async",
                                                    "cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel",
                                                    "cuStreamEndCapture", "cuGraphInstantiateWithFlags"}));
  for (std::size_t i = start; i + 1 < g_log.size(); ++i) EXPECT_EQ(g_log[i].stream, replayer.main_stream());
}

TEST_F(ReplayStub, EdgeGraphSetsCaptureDependenciesToTheReducedEdges) {
  Replayer replayer(api_, plan_);
  const std::size_t start = g_log.size();
  replayer.instantiate(Backend::EdgeGraph);
  std::vector<Call> log(g_log.begin() + static_cast<std::ptrdiff_t>(start), g_log.end());
  // begin, then (update deps, GPU op, capture info) per op, then end and instantiate.
  ASSERT_EQ(log.size(), 1 + 3 * 5 + 2u);
  EXPECT_EQ(log[0].name, "cuStreamBeginCapture");
  const std::vector<std::string> ops = {"cuMemcpyHtoDAsync", "cuMemsetD32Async", "cuLaunchKernel",
                                        "cuLaunchKernel", "cuLaunchKernel"};
  std::vector<CUgraphNode> node(5);
  for (std::size_t i = 0; i < 5; ++i) {
    const Call& update = log[1 + 3 * i];
    const Call& op = log[2 + 3 * i];
    const Call& info = log[3 + 3 * i];
    ASSERT_EQ(update.name, "cuStreamUpdateCaptureDependencies") << i;
    EXPECT_EQ(update.args[0], static_cast<std::uint64_t>(CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    EXPECT_EQ(op.name, ops[i]);
    ASSERT_EQ(info.name, "cuStreamGetCaptureInfo");
    for (const Call* c : {&update, &op, &info}) EXPECT_EQ(c->stream, replayer.main_stream()) << c->name;
    node[i] = reinterpret_cast<CUgraphNode>(info.args[0]);
  }
  using Nodes = std::vector<CUgraphNode>;
  EXPECT_EQ(log[1].nodes, Nodes{});               // task 10: no deps
  EXPECT_EQ(log[4].nodes, Nodes{});               // task 20
  EXPECT_EQ(log[7].nodes, Nodes{node[0]});        // task 30 after 10
  EXPECT_EQ(log[10].nodes, Nodes{node[1]});       // task 40 after 20
  Nodes join = log[13].nodes;                     // task 50 after 30 and 40
  std::sort(join.begin(), join.end());
  Nodes expected = {node[2], node[3]};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(join, expected);
  EXPECT_EQ(log[16].name, "cuStreamEndCapture");
}

TEST_F(ReplayStub, StreamGraphNeedsASchedule) {
  plan_.scheduled = false;
  Replayer replayer(api_, plan_);
  EXPECT_THROW(replayer.instantiate(Backend::StreamGraph), ReplayError);
  EXPECT_THROW(replayer.instantiate(Backend::Eager), ReplayError);
}

TEST_F(ReplayStub, DestructorReleasesWhatTheReplayerCreated) {
  std::size_t host_allocs = 0;
  {
    Replayer replayer(api_, plan_);
    replayer.instantiate(Backend::Graph);
    replayer.instantiate(Backend::EdgeGraph);
    host_allocs = g_host_allocs.size();
  }
  EXPECT_EQ(calls_named("cuStreamCreate").size(), calls_named("cuStreamDestroy").size());
  EXPECT_EQ(calls_named("cuEventCreate").size(), calls_named("cuEventDestroy").size());
  EXPECT_EQ(calls_named("cuMemAllocHost").size(), calls_named("cuMemFreeHost").size());
  EXPECT_EQ(host_allocs, 2u);
  EXPECT_EQ(calls_named("cuMemAlloc").size(), calls_named("cuMemFree").size());
  EXPECT_EQ(calls_named("cuGraphInstantiateWithFlags").size(), calls_named("cuGraphExecDestroy").size());
  EXPECT_EQ(calls_named("cuStreamEndCapture").size(), calls_named("cuGraphDestroy").size());
}

TEST_F(ReplayStub, RunBenchGivesFourBackendsWithTheSameBytes) {
  BenchOptions options;
  options.iterations = 3;
  options.warmup = 1;
  const BenchResult result = run_bench(api_, plan_, options);
  EXPECT_EQ(result.error, "");
  std::uint64_t written = 0;
  for (const MemoryRange& r : plan_.written) written += r.size;
  EXPECT_EQ(written, 4096u + 2048u);  // allocations 0 and 1, whole; allocation 2 is a shadow
  EXPECT_EQ(result.saved_bytes, written);
  ASSERT_EQ(result.backends.size(), 4u);
  const std::vector<std::string> names = {"eager-replay", "graph-1-stream", "graph-nimble-streams", "graph-from-edges"};
  for (std::size_t i = 0; i < 4; ++i) {
    const BackendResult& b = result.backends[i];
    EXPECT_EQ(b.backend, names[i]);
    EXPECT_EQ(b.error, "") << b.backend;
    EXPECT_EQ(b.verified, i == 0 ? "reference" : "same bytes") << b.backend;
    EXPECT_DOUBLE_EQ(b.median_ms, 1.5) << b.backend;
    EXPECT_EQ(b.graph_nodes, i == 0 ? 0u : 7u) << b.backend;
  }
  // Every graph is launched on the main stream: 1 verification + 1 warmup + 3 timed each.
  EXPECT_EQ(calls_named("cuGraphLaunch").size(), 3u * 5);
  // The program's memory was put back: the last DtoD copies restore each written range.
  const auto copies = calls_named("cuMemcpyDtoDAsync");
  ASSERT_GE(copies.size(), 2u);
  std::set<std::uint64_t> restored = {copies[copies.size() - 2].args[0], copies[copies.size() - 1].args[0]};
  EXPECT_EQ(restored, (std::set<std::uint64_t>{0x7f0000000000, 0x7f0000100000}));
}

TEST_F(ReplayStub, LoadDriverApiNamesAMissingFunction) {
  g_missing = "cuGraphGetNodes";
  DriverApi api;
  std::string missing;
  EXPECT_FALSE(load_driver_api(lookup, api, &missing));
  EXPECT_EQ(missing, "cuGraphGetNodes");
  EXPECT_EQ(api.graph_get_nodes, nullptr);
  EXPECT_NE(api.graph_launch, nullptr);
}

TEST_F(ReplayStub, FailingLaunchThrowsAReplayErrorNamingTheTask) {
  g_launch_result = CUDA_ERROR_LAUNCH_FAILED;
  Replayer replayer(api_, plan_);
  const std::string what = eager_replay_error(replayer);
  EXPECT_NE(what.find("kernel launch for task 30 (k30)"), std::string::npos) << what;
  EXPECT_NE(what.find("CUDA_ERROR_LAUNCH_FAILED"), std::string::npos) << what;
  // A failed capture still ends the capture, so the stream stays usable.
  const std::size_t start = g_log.size();
  EXPECT_THROW(replayer.instantiate(Backend::Graph), ReplayError);
  EXPECT_EQ(g_log.back().name, "cuGraphDestroy");
  EXPECT_EQ(calls_named("cuStreamEndCapture").size(), 1u);
  EXPECT_GT(g_log.size(), start);
}

TEST_F(ReplayStub, FailingLaunchInRunBenchIsReportedNamingTheTask) {
  g_launch_result = CUDA_ERROR_LAUNCH_FAILED;
  BenchOptions options;
  options.iterations = 1;
  options.warmup = 0;
  const BenchResult checked = run_bench(api_, plan_, options);
  EXPECT_NE(checked.error.find("task 30"), std::string::npos) << checked.error;

  options.verify = false;
  const BenchResult unchecked = run_bench(api_, plan_, options);
  EXPECT_EQ(unchecked.error, "");
  ASSERT_EQ(unchecked.backends.size(), 4u);
  for (const BackendResult& b : unchecked.backends) {
    EXPECT_NE(b.error.find("task 30"), std::string::npos) << b.backend << ": " << b.error;
  }
}


// A launch with attributes (a cluster) needs cuLaunchKernelEx and keeps them; the plain ones do not.
TEST_F(ReplayStub, AttributesGoThroughLaunchKernelEx) {
  LaunchAttribute cluster;
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value = {2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  plan_.ops[2].kernel.attributes.push_back(cluster);
  Replayer replayer(api_, plan_);
  const std::size_t start = g_log.size();
  replayer.issue_eager();
  EXPECT_EQ(names(start), (std::vector<std::string>{"cuMemcpyHtoDAsync", "cuMemsetD32Async", "cuLaunchKernelEx",
                                                    "cuLaunchKernel", "cuLaunchKernel"}));
  EXPECT_EQ(calls_named("cuLaunchKernelEx").at(0).args.at(0), fn(30));
}


// The fake reports a dynamic shared memory limit of 1000 + 8 (CUfunction) and 2000 + 8 + 300
// (CUkernel on device 3). Launches that need more get the limit raised for the replay only.
TEST_F(ReplayStub, DynamicSharedMemoryLimitsAreRaisedForTheReplayAndPutBack) {
  const auto attr = static_cast<std::uint64_t>(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  ASSERT_EQ(attr, 8u);
  plan_.ops[2].kernel.shared_mem = 512;    // kernel 30, CUfunction: under its limit of 1008
  plan_.ops[3].kernel.shared_mem = 4096;   // kernel 40, CUfunction: over it
  plan_.ops[4].kernel.shared_mem = 32768;  // kernel 50, CUkernel: over 2308
  plan_.ops[4].kernel.is_cukernel = true;
  {
    Replayer replayer(api_, plan_);
    const auto func = calls_named("cuFuncSetAttribute");
    ASSERT_EQ(func.size(), 1u);
    EXPECT_EQ(func[0].args, (std::vector<std::uint64_t>{fn(40), attr, 4096}));
    const auto kernel = calls_named("cuKernelSetAttribute");
    ASSERT_EQ(kernel.size(), 1u);
    EXPECT_EQ(kernel[0].args, (std::vector<std::uint64_t>{fn(50), attr, 32768, 3}));
    replayer.issue_eager();
    EXPECT_EQ(calls_named("cuFuncSetAttribute").size(), 1u) << "raised once, not per launch";
  }
  const auto func = calls_named("cuFuncSetAttribute");
  const auto kernel = calls_named("cuKernelSetAttribute");
  ASSERT_EQ(func.size(), 2u);
  ASSERT_EQ(kernel.size(), 2u);
  EXPECT_EQ(func[1].args, (std::vector<std::uint64_t>{fn(40), attr, 1008})) << "the program's limit is back";
  EXPECT_EQ(kernel[1].args, (std::vector<std::uint64_t>{fn(50), attr, 2308, 3}));
}

// Built on nimble's thread while the program runs on (and may be setting the same limits), a
// Replayer leaves them alone: one that would have to raise a limit refuses, having made nothing;
// one whose kernels fit raises them only when asked, on the program's thread.
TEST_F(ReplayStub, LimitsAreLeftAloneWhenTheyMustFitAndRaisedOnlyWhenAsked) {
  plan_.ops[2].kernel.shared_mem = 512;  // kernel 30: under its limit of 1008
  {
    Replayer replayer(api_, plan_, Replayer::Limits::MustFit);
    EXPECT_TRUE(calls_named("cuFuncSetAttribute").empty());
    replayer.raise_limits();
    EXPECT_TRUE(calls_named("cuFuncSetAttribute").empty()) << "nothing to raise";
  }
  plan_.ops[3].kernel.shared_mem = 4096;  // kernel 40: over its limit
  g_log.clear();
  try {
    Replayer replayer(api_, plan_, Replayer::Limits::MustFit);
    ADD_FAILURE() << "a limit below the recorded need must refuse";
  } catch (const ReplayError& e) {
    EXPECT_NE(std::string(e.what()).find("only the program's thread may raise it"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(calls_named("cuFuncSetAttribute").empty());
  EXPECT_TRUE(calls_named("cuMemAlloc").empty() && calls_named("cuStreamCreate").empty() &&
              calls_named("cuMemAllocHost").empty())
      << "nothing made that a throw from the constructor would leak";
  Replayer replayer(api_, plan_);  // on the program's thread
  ASSERT_EQ(calls_named("cuFuncSetAttribute").size(), 1u);
}

TEST_F(ReplayStub, FailedLaunchNamesTheRecordedShapeAndTheKernelsLimits) {
  g_rejected_handle = fn(40);
  Replayer replayer(api_, plan_);
  const std::string what = eager_replay_error(replayer);
  EXPECT_NE(what.find("task 40"), std::string::npos) << what;
  EXPECT_NE(what.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << what;
  EXPECT_NE(what.find("grid 2x1x1, block 64x1x1, dynamic shared 0 bytes, 1 parameters in 8 argument bytes"),
            std::string::npos) << what;
  EXPECT_NE(what.find("max threads/block " + std::to_string(1000 + CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)),
            std::string::npos) << what;
  EXPECT_NE(what.find("static shared bytes " + std::to_string(1000 + CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)),
            std::string::npos) << what;
}

TEST_F(ReplayStub, CUkernelLimitsAreAskedForTheCurrentDevice) {
  const std::string limits = describe_kernel_limits(api_, reinterpret_cast<CUfunction>(fn(40)), true);
  EXPECT_NE(limits.find("registers " + std::to_string(2000 + CU_FUNC_ATTRIBUTE_NUM_REGS + 300)), std::string::npos)
      << limits;
  DriverApi without = api_;
  without.kernel_get_attribute = nullptr;
  EXPECT_NE(describe_kernel_limits(without, reinterpret_cast<CUfunction>(fn(40)), true).find("registers ?"),
            std::string::npos);
}

// A kernel whose module the program unloaded (XLA's autotuning candidates) answers no attribute:
// the message says the kernel is gone rather than listing unknown limits.
TEST_F(ReplayStub, AKernelWhoseModuleWasUnloadedIsSaidToBeGone) {
  DriverApi unloaded = api_;
  unloaded.func_get_attribute = [](int*, CUfunction_attribute, CUfunction) { return CUDA_ERROR_INVALID_HANDLE; };
  const std::string gone = describe_kernel_limits(unloaded, reinterpret_cast<CUfunction>(fn(40)), false);
  EXPECT_NE(gone.find("the kernel is no longer loaded"), std::string::npos) << gone;
  EXPECT_EQ(gone.find("registers"), std::string::npos) << gone;
  // One attribute unknown is no sign of that: the limits are listed.
  const std::string listed = describe_kernel_limits(api_, reinterpret_cast<CUfunction>(fn(40)), false);
  EXPECT_NE(listed.find("kernel limits: max threads/block"), std::string::npos) << listed;
}


BenchOptions quick_bench() {
  BenchOptions options;
  options.iterations = 1;
  options.warmup = 0;
  return options;
}

// A range whose bytes change between the eager reference replays is nondeterministic: counted,
// not compared, so the backends still match on every other range.
TEST_F(ReplayStub, RangesThatDifferBetweenEagerReplaysAreNotCompared) {
  g_perturbed_addr = 0x7f0000100000;
  g_perturb_from = 1;  // every read differs
  const BenchResult result = run_bench(api_, plan_, quick_bench());
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(result.checked_ranges, 3u);  // two written allocations and the shadow block
  EXPECT_EQ(result.nondeterministic_ranges, 1u);
  for (const BackendResult& b : result.backends) {
    EXPECT_EQ(b.verified, b.backend == "eager-replay" ? "reference" : "same bytes") << b.backend;
  }
  const trace::json json = bench_to_json(result, {}, std::nullopt, nullptr);
  EXPECT_EQ(json["nondeterministic_ranges"], 1);
  EXPECT_EQ(json["checked_ranges"], 3);
}

// The eager replays agree and a graph does not: that range is reported, with its address.
TEST_F(ReplayStub, ARangeOnlyABackendChangesIsReportedWithItsAddress) {
  g_perturbed_addr = 0x7f0000100000;
  g_perturb_from = 4;  // reads 1-3 are the three reference replays
  const BenchResult result = run_bench(api_, plan_, quick_bench());
  ASSERT_EQ(result.error, "");
  EXPECT_EQ(result.nondeterministic_ranges, 0u);
  ASSERT_EQ(result.backends.size(), 4u);
  EXPECT_EQ(result.backends[1].verified, "1 of 3 ranges differ");
  ASSERT_EQ(result.backends[1].differing.size(), 1u);
  EXPECT_EQ(result.backends[1].differing[0].addr, 0x7f0000100000u);
  const trace::json json = bench_to_json(result, {}, std::nullopt, nullptr);
  EXPECT_EQ(json["backends"][1]["differing_ranges"][0]["addr"], "0x7f0000100000");
  EXPECT_EQ(json["backends"][1]["differing_ranges"][0]["size"], 2048);
}

TEST_F(ReplayStub, AKernelIssuedOnFallBackGetsItsSharedMemoryLimitForTheLaunchOnly) {
  // The program's library lowered the limit again after the Replayer raised it (the fake always
  // answers 1008): the launch is bracketed by a raise and the program's value put back.
  plan_.ops[3].kernel.shared_mem = 4096;
  Replayer replayer(api_, plan_);
  const std::size_t start = g_log.size();
  replayer.issue_kernel(3, reinterpret_cast<CUstream>(0x5), plan_.ops[3].kernel.args);
  EXPECT_EQ(names(start), (std::vector<std::string>{"cuFuncSetAttribute", "cuLaunchKernel", "cuFuncSetAttribute"}));
  EXPECT_EQ(g_log[start].args[2], 4096u);
  EXPECT_EQ(g_log[start + 2].args[2], 1008u);
}

// ---------------------------------------------------------------------------------------------
// GraphExecutor (nimble run): one graph per segment, node parameters patched per iteration.

class RunExecutorStub : public ReplayStub {
 protected:
  void SetUp() override {
    ReplayStub::SetUp();
    run_trace_ = parse(trace_text());  // call_trace.hpp: kernel(seed), HtoD, memset, sync, DtoH
    PlanResult r = plan_of(run_trace_);
    ASSERT_TRUE(r.plan) << joined(r);
    run_plan_ = std::move(*r.plan);
    segments_ = segments_of(run_plan_);
  }
  KernelCall kernel_call(std::uint64_t seed) const {
    const KernelOp& k = run_plan_.ops[0].kernel;
    KernelCall c{k.function, {k.grid[0], k.grid[1], k.grid[2]}, {k.block[0], k.block[1], k.block[2]}, k.shared_mem, k.args};
    std::memcpy(c.args.data() + 8, &seed, 8);
    return c;
  }
  // The recorded iteration with its host-to-device copy made a device-to-device one: the kernel,
  // that copy and the memset then lie in one segment.
  ReplayPlan one_segment_plan() const {
    ReplayPlan p = run_plan_;
    p.ops[1].copy.direction = CopyDirection::DtoD;
    p.ops[1].copy.src = kOther;
    return p;
  }
  MemsetCall memset_call(std::uint32_t value) const {
    const MemsetOp& m = run_plan_.ops[2].memset;
    return {m.dst, value, m.element_size, m.width, m.height, m.pitch};
  }
  // One iteration through a ShortCircuit driving `executor`.
  void iteration(ShortCircuit& sc, std::uint64_t seed, std::uint32_t value) {
    EXPECT_EQ(sc.on_call(kernel_call(seed)), Action::Deferred);
    EXPECT_EQ(sc.on_call(CopyCall{CopyDirection::HtoD, 0x560000007000, kBuffer, 256}), Action::Run);
    EXPECT_EQ(sc.on_call(memset_call(value)), Action::Deferred);
    EXPECT_EQ(sc.on_call(CopyCall{CopyDirection::DtoH, kOther, 0x560000008000, 64}), Action::Run);
  }

  trace::Trace run_trace_;
  ReplayPlan run_plan_;
  std::vector<Segment> segments_;
};

TEST_F(RunExecutorStub, BuildsAGraphPerSegmentTheProgramDoesNotRunItself) {
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph);
  EXPECT_EQ(executor.graphs(), 2u);  // the kernel; the memset (+ sync). Host copies: none.
  EXPECT_EQ(calls_named("cuGraphInstantiateWithFlags").size(), 2u);
  EXPECT_TRUE(calls_named("cuMemcpyHtoDAsync").empty());
  EXPECT_TRUE(calls_named("cuMemcpyDtoHAsync").empty());
}

TEST_F(RunExecutorStub, ChangedScalarsAreWrittenIntoTheGraphAndPutBackWhenTheRecordedOnesReturn) {
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph);
  executor.set_stream(reinterpret_cast<CUstream>(0x5));
  ShortCircuit sc(run_plan_, segments_, on_device, executor);
  const std::size_t start = g_log.size();
  iteration(sc, 42, 7);  // exactly the recorded values: nothing to change
  EXPECT_EQ(names(start), (std::vector<std::string>{"cuGraphLaunch", "cuGraphLaunch"}));
  EXPECT_EQ(g_log[start].stream, reinterpret_cast<CUstream>(0x5));

  const std::size_t second = g_log.size();
  iteration(sc, 1234, 9);
  EXPECT_EQ(names(second), (std::vector<std::string>{"cuGraphKernelNodeGetParams", "cuGraphExecKernelNodeSetParams",
                                                     "cuGraphLaunch", "cuGraphMemsetNodeGetParams",
                                                     "cuGraphExecMemsetNodeSetParams", "cuGraphLaunch"}));
  EXPECT_EQ(calls_named("cuGraphExecKernelNodeSetParams").back().args[2], 1234u);
  EXPECT_EQ(calls_named("cuGraphExecMemsetNodeSetParams").back().args[2], 9u);
  EXPECT_EQ(calls_named("cuGraphExecMemsetNodeSetParams").back().args[3], 0x77u);  // the current context

  const std::size_t same = g_log.size();
  iteration(sc, 1234, 9);  // the graph already holds these
  EXPECT_EQ(names(same), (std::vector<std::string>{"cuGraphLaunch", "cuGraphLaunch"}));

  iteration(sc, 42, 7);  // back to the recorded values: written back
  EXPECT_EQ(calls_named("cuGraphExecKernelNodeSetParams").back().args[2], 42u);
  EXPECT_EQ(calls_named("cuGraphExecMemsetNodeSetParams").back().args[2], 7u);
  EXPECT_EQ(executor.stats().node_updates, 4u);
  EXPECT_EQ(executor.stats().launches, 8u);
  EXPECT_EQ(sc.summary().iterations_replayed, 3u);
}

TEST_F(RunExecutorStub, AlternatingParametersGetAnExecEachAndNeedNoMoreWrites) {
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph, /*max_variants=*/2);
  ShortCircuit sc(run_plan_, segments_, on_device, executor);
  iteration(sc, 42, 7);
  const std::size_t instantiated = calls_named("cuGraphInstantiateWithFlags").size();
  iteration(sc, 1234, 9);  // another set, not seen before: written into the exec (it may never come again)
  EXPECT_EQ(calls_named("cuGraphInstantiateWithFlags").size(), instantiated);
  EXPECT_EQ(executor.stats().node_updates, 2u);
  iteration(sc, 42, 7);  // the recorded set again: a fresh exec holds it, with no write
  EXPECT_EQ(calls_named("cuGraphInstantiateWithFlags").size(), instantiated + 2);
  EXPECT_EQ(executor.stats().node_updates, 2u);
  iteration(sc, 1234, 9);
  const std::size_t steady = g_log.size();
  for (int round = 0; round < 3; ++round) {
    iteration(sc, 42, 7);
    iteration(sc, 1234, 9);
  }
  // Each set has its exec: only launches, alternating between the two execs of a segment.
  std::vector<std::string> expected;
  for (int launch = 0; launch < 12; ++launch) expected.push_back("cuGraphLaunch");
  EXPECT_EQ(names(steady), expected);
  EXPECT_NE(g_log[steady].args[0], g_log[steady + 2].args[0]);
  EXPECT_EQ(g_log[steady].args[0], g_log[steady + 4].args[0]);
  EXPECT_EQ(executor.stats().node_updates, 2u);
  EXPECT_EQ(executor.stats().execs, 4u);

  iteration(sc, 5, 5);  // a third set with no exec left to add: the closest exec is rewritten
  EXPECT_EQ(executor.stats().execs, 4u);
  EXPECT_EQ(executor.stats().node_updates, 4u);
  EXPECT_EQ(calls_named("cuGraphExecKernelNodeSetParams").back().args[2], 5u);
}

// Writes for parameters a segment had in a recent launch (buffers rotating among three sets) are
// told apart from writes for new ones: the moving-buffers verdict counts only the new.
TEST_F(RunExecutorStub, WritesForARotationOfThreeSetsAreNotCountedAsNew) {
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph, /*max_variants=*/4);
  ShortCircuit sc(run_plan_, segments_, on_device, executor);
  const std::uint64_t seeds[] = {1, 2, 3};
  for (int i = 0; i < 3; ++i) iteration(sc, seeds[i], static_cast<std::uint32_t>(seeds[i]));  // new sets
  EXPECT_EQ(executor.node_writes(), 6u);  // the kernel's and the memset's node, each time
  EXPECT_EQ(executor.node_writes_for_new_parameters(), 6u);
  for (int i = 0; i < 9; ++i) iteration(sc, seeds[i % 3], static_cast<std::uint32_t>(seeds[i % 3]));
  EXPECT_EQ(executor.node_writes_for_new_parameters(), 6u) << "the rotation's writes are not new";
  EXPECT_EQ(executor.node_writes(), 10u);  // the first two again, into further execs; then none
  for (std::uint64_t seed = 100; seed < 104; ++seed) iteration(sc, seed, static_cast<std::uint32_t>(seed));
  EXPECT_EQ(executor.node_writes_for_new_parameters(), 14u);  // new addresses every time
  EXPECT_EQ(executor.node_writes(), 18u);
}

// A dropped recording's executor gives back every exec (further variants too), graph and stand-in
// buffer at once, not at exit; its counts stay for the summary, and it launches nothing after.
TEST_F(RunExecutorStub, ReleaseDestroysEveryExecAndGraphOnceAndLaunchesNothingAfter) {
  auto executor = std::make_unique<GraphExecutor>(api_, run_plan_, segments_, Backend::Graph, /*max_variants=*/2);
  ShortCircuit sc(run_plan_, segments_, on_device, *executor);
  iteration(sc, 42, 7);
  iteration(sc, 1234, 9);
  iteration(sc, 42, 7);  // a second exec of each segment
  ASSERT_EQ(executor->stats().execs, 4u);
  EXPECT_FALSE(executor->released());
  EXPECT_TRUE(calls_named("cuGraphExecDestroy").empty());
  ASSERT_EQ(executor->graphs(), 2u);
  executor->release();
  EXPECT_TRUE(executor->released());
  EXPECT_EQ(executor->graphs(), 0u);
  std::vector<std::uint64_t> made, destroyed;
  for (const Call& c : calls_named("cuGraphInstantiateWithFlags")) made.push_back(c.args[0]);
  for (const Call& c : calls_named("cuGraphExecDestroy")) destroyed.push_back(c.args[0]);
  std::sort(made.begin(), made.end());
  std::sort(destroyed.begin(), destroyed.end());
  EXPECT_EQ(destroyed, made);  // each exec once
  EXPECT_EQ(calls_named("cuGraphDestroy").size(), 2u);  // one graph per segment
  EXPECT_EQ(calls_named("cuMemAlloc").size(), calls_named("cuMemFree").size());
  EXPECT_EQ(calls_named("cuMemAllocHost").size(), calls_named("cuMemFreeHost").size());
  EXPECT_EQ(executor->stats().execs, 4u);
  EXPECT_EQ(executor->stats().launches, 6u);
  const std::size_t after = g_log.size();
  executor->release();  // twice: nothing more
  EXPECT_THROW(executor->launch_segment(0, IterationMatcher(run_plan_, on_device)), ReplayError);
  EXPECT_THROW(executor->issue(0, kernel_call(1)), ReplayError);
  executor.reset();  // and nothing again when destroyed
  EXPECT_EQ(g_log.size(), after);
}

// The driver refuses a further exec of a segment (cuDNN's kernels in benchmark mode, H200): replay
// goes on with the exec the segment has, its nodes rewritten, and asks for no other.
TEST_F(RunExecutorStub, AFurtherExecTheDriverRefusesLeavesTheSegmentItsOwn) {
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph, /*max_variants=*/2);
  ShortCircuit sc(run_plan_, segments_, on_device, executor);
  g_instantiations_left = 0;
  iteration(sc, 42, 7);
  iteration(sc, 1234, 9);
  iteration(sc, 42, 7);  // would get a fresh exec: refused, the one exec rewritten back
  EXPECT_EQ(calls_named("cuGraphInstantiateWithFlags (refused)").size(), 2u);  // once per segment
  EXPECT_EQ(executor.stats().execs_refused, 2u);
  EXPECT_EQ(executor.stats().execs, 2u);
  EXPECT_EQ(calls_named("cuGraphExecKernelNodeSetParams").back().args[2], 42u);
  for (int round = 0; round < 3; ++round) {
    iteration(sc, 1234, 9);
    iteration(sc, 42, 7);
  }
  EXPECT_EQ(calls_named("cuGraphInstantiateWithFlags (refused)").size(), 2u) << "not asked again";
  EXPECT_EQ(calls_named("cuGraphExecKernelNodeSetParams").back().args[2], 42u);
  EXPECT_EQ(sc.summary().iterations_replayed, 8u);
  EXPECT_TRUE(sc.summary().fallbacks.empty());
}

// A further exec is instantiated with its kernels' dynamic shared memory limits raised (the
// program's library may have lowered them since the graph was built), and the limits put back.
TEST_F(RunExecutorStub, AFurtherExecIsInstantiatedWithItsKernelsLimitsRaised) {
  run_plan_.ops[0].kernel.shared_mem = 4096;  // over the fake's limit of 1008
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph, /*max_variants=*/2);
  ShortCircuit sc(run_plan_, segments_, on_device, executor);
  iteration(sc, 42, 7);
  iteration(sc, 1234, 9);
  const std::size_t start = g_log.size();
  iteration(sc, 42, 7);  // the recorded set again: a fresh exec
  std::vector<std::string> around;
  for (std::size_t i = start; i < g_log.size(); ++i) {
    if (g_log[i].name == "cuFuncSetAttribute" || g_log[i].name == "cuGraphInstantiateWithFlags") around.push_back(g_log[i].name);
  }
  ASSERT_GE(around.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(around.begin(), around.begin() + 3),
            (std::vector<std::string>{"cuFuncSetAttribute", "cuGraphInstantiateWithFlags", "cuFuncSetAttribute"}));
}

// Two sets that are neither the recorded one (buffers ping-ponging between two new addresses):
// the second time a set comes, it gets an exec of its own.
TEST_F(RunExecutorStub, TwoNewSetsThatAlternateGetAnExecEachOnceOneComesAgain) {
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph, /*max_variants=*/4);
  ShortCircuit sc(run_plan_, segments_, on_device, executor);
  iteration(sc, 100, 1);
  iteration(sc, 200, 2);
  EXPECT_EQ(executor.stats().execs, 2u) << "new sets are written, not instantiated";
  EXPECT_EQ(executor.stats().node_updates, 4u);
  iteration(sc, 100, 1);  // seen before: its own exec
  EXPECT_EQ(executor.stats().execs, 4u);
  const std::size_t updates = executor.stats().node_updates;
  for (int round = 0; round < 3; ++round) {
    iteration(sc, 200, 2);
    iteration(sc, 100, 1);
  }
  EXPECT_EQ(executor.stats().node_updates, updates) << "each set has an exec holding it";
  EXPECT_EQ(executor.stats().execs, 4u);
}

// Addresses that are new every iteration (HF generate's growing KV cache): each iteration writes
// the changed nodes into the one exec; no graph is instantiated again.
TEST_F(RunExecutorStub, ParametersNewEveryIterationAreWrittenWithoutInstantiatingAgain) {
  GraphExecutor executor(api_, run_plan_, segments_, Backend::Graph, /*max_variants=*/4);
  ShortCircuit sc(run_plan_, segments_, on_device, executor);
  const std::size_t instantiated = calls_named("cuGraphInstantiateWithFlags").size();
  for (int i = 1; i <= 10; ++i) iteration(sc, 1000 + i, 100 + i);
  EXPECT_EQ(calls_named("cuGraphInstantiateWithFlags").size(), instantiated);
  EXPECT_EQ(executor.stats().execs, 2u);
  EXPECT_EQ(executor.stats().node_updates, 20u);
  EXPECT_EQ(calls_named("cuGraphExecKernelNodeSetParams").back().args[2], 1010u);
  EXPECT_EQ(sc.summary().iterations_replayed, 9u);  // the tenth is counted when another begins
}

// Pointers that alternate between the recorded addresses and others while a scalar changes every
// step (an optimizer's bias correction passed as a kernel argument): no set of parameters ever
// comes again, yet a fresh exec holding the recording needs only the scalar written every other
// step. It is instantiated, and each step then writes one node, not three. (A rule that made execs
// only for sets that came again, 4af9006, wrote all three each step: the timm EfficientNet, ResNet-18
// AMP/AdamW and GoogLeNet programs were dropped for moving buffers at their warm-up; H200, 2026-11-29.)
TEST_F(RunExecutorStub, PointersAlternatingWithTheRecordingGetAFreshExecThoughAScalarIsNewEveryStep) {
  const ReplayPlan plan = one_segment_plan();
  const auto segments = segments_of(plan);
  GraphExecutor executor(api_, plan, segments, Backend::Graph, /*max_variants=*/4);
  ShortCircuit sc(plan, segments, on_device, executor, ArgumentRule::AnyBytes);
  const auto step = [&](bool recorded_pointers, std::uint32_t scalar) {
    EXPECT_EQ(sc.on_call(kernel_call(recorded_pointers ? 42 : 1234)), Action::Deferred);
    EXPECT_EQ(sc.on_call(CopyCall{CopyDirection::DtoD, recorded_pointers ? kOther : kOther + 512, kBuffer, 256}),
              Action::Deferred);
    EXPECT_EQ(sc.on_call(memset_call(scalar)), Action::Deferred);
    EXPECT_EQ(sc.on_call(CopyCall{CopyDirection::DtoH, kOther, 0x560000008000, 64}), Action::Run);
  };
  std::uint32_t scalar = 7;
  for (int i = 0; i < 4; ++i) step(i % 2 == 0, scalar++);  // the recorded set, then warm-up
  const std::size_t execs = executor.stats().execs, writes = executor.node_writes();
  for (int i = 4; i < 12; ++i) step(i % 2 == 0, scalar++);
  EXPECT_EQ(executor.stats().execs, execs) << "each pointer set has its exec by now";
  EXPECT_EQ(executor.node_writes() - writes, 8u) << "the scalar's node only, once a step";
  EXPECT_TRUE(sc.summary().fallbacks.empty());
}

// A memset into memory the program freed during the recorded iteration (a pool tensor): it is
// captured on nimble's stand-in, so even the recorded address must be written into the node
// before the graph runs for the program.
TEST_F(RunExecutorStub, AMemsetCapturedOnAStandInGetsTheProgramsAddress) {
  ReplayPlan plan = run_plan_;
  plan.ops[2].memset.dst_shadow = ShadowAddress{0, 0};
  plan.shadow_sizes = {1024};
  plan.shadow_offsets = {0};
  plan.shadow_bytes = 1024;
  const auto segments = segments_of(plan);
  GraphExecutor executor(api_, plan, segments, Backend::Graph, 2);
  ShortCircuit sc(plan, segments, on_device, executor, ArgumentRule::AnyBytes);
  iteration(sc, 42, 7);  // exactly the recorded values
  auto writes = calls_named("cuGraphExecMemsetNodeSetParams");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].args[4], plan.ops[2].memset.dst) << "the program's address, not the stand-in";
  iteration(sc, 42, 7);
  EXPECT_EQ(calls_named("cuGraphExecMemsetNodeSetParams").size(), 1u) << "the exec holds it now";
}

TEST_F(RunExecutorStub, InProgramOrderMovedBuffersArePatchedIntoCopyAndMemsetNodes) {
  const ReplayPlan plan = one_segment_plan();
  const auto segments = segments_of(plan);
  GraphExecutor executor(api_, plan, segments, Backend::Graph);
  ShortCircuit sc(plan, segments, on_device, executor, ArgumentRule::AnyBytes);
  EXPECT_EQ(sc.on_call(kernel_call(42)), Action::Deferred);
  EXPECT_EQ(sc.on_call(CopyCall{CopyDirection::DtoD, kOther + 512, kBuffer + 256, 256}), Action::Deferred);
  EXPECT_EQ(sc.on_call(MemsetCall{kBuffer + 1024, 7, 4, plan.ops[2].memset.width, 1, 0}), Action::Deferred);
  const auto copy = calls_named("cuGraphExecMemcpyNodeSetParams");
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].args[2], kOther + 512);
  EXPECT_EQ(copy[0].args[3], kBuffer + 256);
  ASSERT_EQ(calls_named("cuGraphExecMemsetNodeSetParams").size(), 1u);
  EXPECT_EQ(names(g_log.size() - 1), (std::vector<std::string>{"cuGraphLaunch"}));
  EXPECT_TRUE(sc.summary().fallbacks.empty());
}

TEST_F(RunExecutorStub, AFallBackIssuesTheProgramsOwnArguments) {
  const ReplayPlan plan = one_segment_plan();
  const auto segments = segments_of(plan);
  GraphExecutor executor(api_, plan, segments, Backend::Graph);
  executor.set_stream(reinterpret_cast<CUstream>(0x5));
  ShortCircuit sc(plan, segments, on_device, executor);
  const std::size_t start = g_log.size();
  EXPECT_EQ(sc.on_call(kernel_call(777)), Action::Deferred);
  EXPECT_EQ(sc.on_call(CopyCall{CopyDirection::DtoD, kOther, kBuffer, 256}), Action::Deferred);
  sc.on_host_visible_point("synchronized a stream");
  EXPECT_EQ(names(start), (std::vector<std::string>{"cuLaunchKernel", "cuMemcpyDtoDAsync"}));
  EXPECT_EQ(g_log[start].stream, reinterpret_cast<CUstream>(0x5));
  std::uint64_t seed = 0;
  std::memcpy(&seed, g_log[start].param0.data(), 8);  // param0: the first parameter's bytes
  EXPECT_EQ(seed, kBuffer);                            // the pointer, as the program passed it
}

}  // namespace
}  // namespace nimble::replayer
