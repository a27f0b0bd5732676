// check_*_call and IterationMatcher: which later calls count as the recorded work, what becomes a
// patch, and why the rest does not match.
#include <gtest/gtest.h>

#include <cstring>

#include "nimble/replayer/call_check.hpp"
#include "call_trace.hpp"
#include "test_util.hpp"

namespace nimble::replayer {
namespace {

using test::document;
using test::parse;
using test::plan_of;

class CallCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = parse(trace_text());
    PlanResult r = plan_of(trace_);
    ASSERT_TRUE(r.plan) << test::joined(r);
    plan_ = std::move(*r.plan);
    ASSERT_EQ(plan_.ops.size(), 5u);
  }
  KernelCall recorded_kernel() const {
    const KernelOp& k = plan_.ops[0].kernel;
    KernelCall c;
    c.function = k.function;
    std::copy(k.grid, k.grid + 3, c.grid);
    std::copy(k.block, k.block + 3, c.block);
    c.shared_mem = k.shared_mem;
    c.args = k.args;
    return c;
  }
  static void put(KernelCall& c, std::size_t offset, std::uint64_t value, std::size_t size = 8) {
    std::memcpy(c.args.data() + offset, &value, size);
  }
  trace::Trace trace_;
  ReplayPlan plan_;
};

TEST_F(CallCheckTest, PlanKeepsEveryResolvedPointerOffset) {
  EXPECT_EQ(plan_.ops[0].kernel.pointer_offsets, (std::vector<std::uint32_t>{0}));
}

TEST_F(CallCheckTest, TheSameCallMatchesWithoutPatches) {
  const CallCheck c = check_kernel_call(plan_.ops[0], recorded_kernel(), on_device);
  EXPECT_TRUE(c.matches) << c.mismatch;
  EXPECT_TRUE(c.patches.empty());
}

TEST_F(CallCheckTest, AChangedScalarBecomesAPatchOfItsParameter) {
  KernelCall call = recorded_kernel();
  put(call, 8, 43);  // the seed
  const CallCheck c = check_kernel_call(plan_.ops[0], call, on_device);
  ASSERT_TRUE(c.matches) << c.mismatch;
  ASSERT_EQ(c.patches.size(), 1u);
  EXPECT_EQ(c.patches[0].offset, 8u);
  ASSERT_EQ(c.patches[0].bytes.size(), 8u);
  std::uint64_t seed = 0;
  std::memcpy(&seed, c.patches[0].bytes.data(), 8);
  EXPECT_EQ(seed, 43u);
  // Two parameters changed: two patches, each of its parameter's bytes (the count is 4 bytes).
  put(call, 16, 99, 4);
  const CallCheck two = check_kernel_call(plan_.ops[0], call, on_device);
  ASSERT_EQ(two.patches.size(), 2u);
  EXPECT_EQ(two.patches[1].offset, 16u);
  EXPECT_EQ(two.patches[1].bytes.size(), 4u);
}

// The 4 bytes after the count pad the buffer to 24: no kernel reads them, and they often hold
// stale stack bytes that change with every call.
TEST_F(CallCheckTest, BytesBetweenParametersAreNotCompared) {
  KernelCall call = recorded_kernel();
  put(call, 20, 0xdeadbeef, 4);
  for (ArgumentRule rule : {ArgumentRule::SameAddresses, ArgumentRule::AnyBytes}) {
    const CallCheck c = check_kernel_call(plan_.ops[0], call, on_device, rule);
    EXPECT_TRUE(c.matches) << c.mismatch;
    EXPECT_TRUE(c.patches.empty());
  }
  ReplayPlan no_sizes = plan_;  // a trace without parameter sizes: up to the next parameter
  no_sizes.ops[0].kernel.param_sizes.clear();
  EXPECT_EQ(check_kernel_call(no_sizes.ops[0], call, on_device).patches.size(), 1u);
}

TEST_F(CallCheckTest, ChangedPointerIsAMismatch) {
  KernelCall call = recorded_kernel();
  put(call, 0, kBuffer + 256);
  const CallCheck c = check_kernel_call(plan_.ops[0], call, on_device);
  EXPECT_FALSE(c.matches);
  EXPECT_NE(c.mismatch.find("task 0 (dropout): pointer argument at byte 0 changed: 0x7f0000000000 -> 0x7f0000000100"),
            std::string::npos) << c.mismatch;
}

TEST_F(CallCheckTest, ARecordedPointerThatBecomesNoAddressIsAPatch) {
  // Stale bytes in an unused struct field: an address in the recording, garbage now.
  KernelCall call = recorded_kernel();
  put(call, 0, 0x100000001);
  const CallCheck c = check_kernel_call(plan_.ops[0], call, on_device);
  ASSERT_TRUE(c.matches) << c.mismatch;
  ASSERT_EQ(c.patches.size(), 1u);
  EXPECT_EQ(c.patches[0].offset, 0u);
  // Without a way to tell addresses, a changed pointer stays a mismatch.
  EXPECT_FALSE(check_kernel_call(plan_.ops[0], call, nullptr).matches);
}

TEST_F(CallCheckTest, InProgramOrderAnyArgumentBytesMayChange) {
  KernelCall call = recorded_kernel();
  put(call, 0, kBuffer + 256);   // another pointer
  put(call, 8, kOther + 64);     // a scalar that now looks like an address
  EXPECT_FALSE(check_kernel_call(plan_.ops[0], call, on_device).matches);
  const CallCheck c = check_kernel_call(plan_.ops[0], call, on_device, ArgumentRule::AnyBytes);
  ASSERT_TRUE(c.matches) << c.mismatch;
  ASSERT_EQ(c.patches.size(), 2u);
  EXPECT_EQ(c.patches[0].offset, 0u);
  EXPECT_EQ(c.patches[1].offset, 8u);
  // The kernel and its launch shape must still be the recorded ones.
  call.grid[0] = 8;
  EXPECT_FALSE(check_kernel_call(plan_.ops[0], call, on_device, ArgumentRule::AnyBytes).matches);
}

TEST_F(CallCheckTest, InProgramOrderMemsetTargetsAndHostCopyDeviceEndsMayMove) {
  const MemsetOp& m = plan_.ops[2].memset;
  const MemsetCall moved{kBuffer, m.value, m.element_size, m.width, m.height, m.pitch};
  EXPECT_FALSE(check_memset_call(plan_.ops[2], moved).matches);
  const CallCheck c = check_memset_call(plan_.ops[2], moved, ArgumentRule::AnyBytes);
  ASSERT_TRUE(c.matches) << c.mismatch;
  ASSERT_EQ(c.patches.size(), 1u);
  EXPECT_EQ(c.patches[0].offset, kMemsetDestination);
  std::uint64_t dst = 0;
  std::memcpy(&dst, c.patches[0].bytes.data(), 8);
  EXPECT_EQ(dst, kBuffer);
  // The DtoH copy (run by the program itself) may read another device buffer; its size may not change.
  const CopyCall dtoh{CopyDirection::DtoH, kBuffer, 0x560000008000, 64};
  EXPECT_FALSE(check_copy_call(plan_.ops[4], dtoh).matches);
  EXPECT_TRUE(check_copy_call(plan_.ops[4], dtoh, ArgumentRule::AnyBytes).matches);
  EXPECT_FALSE(check_copy_call(plan_.ops[4], {CopyDirection::DtoH, kBuffer, 0x560000008000, 32}, ArgumentRule::AnyBytes).matches);
}

TEST_F(CallCheckTest, AScalarThatBecomesADeviceAddressIsAMismatch) {
  KernelCall call = recorded_kernel();
  put(call, 8, kOther + 64);
  const CallCheck c = check_kernel_call(plan_.ops[0], call, on_device);
  EXPECT_FALSE(c.matches);
  EXPECT_NE(c.mismatch.find("argument word at byte 8 changed from 0x2a to 0x7f0000100040, a device address"),
            std::string::npos) << c.mismatch;
  // Without a way to tell device addresses, a changed scalar stays a patch.
  EXPECT_TRUE(check_kernel_call(plan_.ops[0], call, nullptr).matches);
}

TEST_F(CallCheckTest, OtherKernelOrLaunchShapeOrArgumentSizeIsAMismatch) {
  KernelCall call = recorded_kernel();
  call.function = 0x2000;
  EXPECT_NE(check_kernel_call(plan_.ops[0], call, on_device).mismatch.find("a different kernel (recorded 0x1000, called 0x2000)"),
            std::string::npos);
  call = recorded_kernel();
  call.grid[0] = 8;
  EXPECT_NE(check_kernel_call(plan_.ops[0], call, on_device).mismatch.find("launch shape changed: grid 4x1x1 -> 8x1x1"),
            std::string::npos);
  call = recorded_kernel();
  call.shared_mem = 1024;
  EXPECT_NE(check_kernel_call(plan_.ops[0], call, on_device).mismatch.find("dynamic shared 0 -> 1024 bytes"),
            std::string::npos);
  call = recorded_kernel();
  call.args.push_back(0);
  EXPECT_NE(check_kernel_call(plan_.ops[0], call, on_device).mismatch.find("argument bytes changed size: 24 -> 25"),
            std::string::npos);
}

TEST_F(CallCheckTest, CopiesMatchOnTheirDeviceEndsAndStageTheHostEnd) {
  CopyCall htod{CopyDirection::HtoD, 0x560000009000, kBuffer, 256};  // another host buffer: fine
  CallCheck c = check_copy_call(plan_.ops[1], htod);
  EXPECT_TRUE(c.matches) << c.mismatch;
  EXPECT_EQ(c.host_end, 0x560000009000u);
  htod.dst = kBuffer + 8;
  EXPECT_NE(check_copy_call(plan_.ops[1], htod).mismatch.find("copy destination changed"), std::string::npos);
  htod = {CopyDirection::HtoD, 0x560000009000, kBuffer, 128};
  EXPECT_NE(check_copy_call(plan_.ops[1], htod).mismatch.find("copy size changed: 256 -> 128 bytes"), std::string::npos);
  EXPECT_NE(check_copy_call(plan_.ops[1], {CopyDirection::DtoD, kOther, kBuffer, 256}).mismatch.find("HtoD -> DtoD"),
            std::string::npos);
  const CallCheck dtoh = check_copy_call(plan_.ops[4], {CopyDirection::DtoH, kOther, 0x56000000a000, 64});
  EXPECT_TRUE(dtoh.matches) << dtoh.mismatch;
  EXPECT_EQ(dtoh.host_end, 0x56000000a000u);
  EXPECT_NE(check_copy_call(plan_.ops[4], {CopyDirection::DtoH, kBuffer, 0x56000000a000, 64}).mismatch.find("copy source changed"),
            std::string::npos);
}

TEST_F(CallCheckTest, MemsetValueIsAPatchItsTargetIsNot) {
  const MemsetOp& m = plan_.ops[2].memset;
  MemsetCall call{m.dst, 7, m.element_size, m.width, m.height, m.pitch};
  EXPECT_TRUE(check_memset_call(plan_.ops[2], call).patches.empty());
  call.value = 9;
  const CallCheck c = check_memset_call(plan_.ops[2], call);
  ASSERT_TRUE(c.matches);
  ASSERT_EQ(c.patches.size(), 1u);
  EXPECT_EQ(c.patches[0].bytes, (std::vector<std::uint8_t>{9, 0, 0, 0}));
  call.width /= 2;
  EXPECT_NE(check_memset_call(plan_.ops[2], call).mismatch.find("memset target changed"), std::string::npos);
}

TEST_F(CallCheckTest, MatcherFollowsTheIterationSkippingSyncs) {
  IterationMatcher matcher(plan_, on_device);
  KernelCall kernel = recorded_kernel();
  put(kernel, 8, 1234);
  EXPECT_TRUE(matcher.next(kernel).matches);
  EXPECT_TRUE(matcher.next(CopyCall{CopyDirection::HtoD, 0x560000001000, kBuffer, 256}).matches);
  const MemsetOp& m = plan_.ops[2].memset;
  EXPECT_TRUE(matcher.next(MemsetCall{m.dst, 7, m.element_size, m.width, m.height, m.pitch}).matches);
  EXPECT_EQ(matcher.position(), 4u) << "the sync (task 3) is passed over";
  EXPECT_FALSE(matcher.complete());
  EXPECT_TRUE(matcher.next(CopyCall{CopyDirection::DtoH, kOther, 0x560000002000, 64}).matches);
  EXPECT_TRUE(matcher.complete());
  EXPECT_EQ(matcher.patches()[0].size(), 1u);
  EXPECT_TRUE(matcher.patches()[1].empty());
  // One call too many.
  const CallCheck extra = matcher.next(kernel);
  EXPECT_FALSE(extra.matches);
  EXPECT_NE(extra.mismatch.find("after the end of the recorded iteration"), std::string::npos) << extra.mismatch;
  matcher.reset();
  EXPECT_EQ(matcher.position(), 0u);
  EXPECT_TRUE(matcher.patches()[0].empty());
}

TEST_F(CallCheckTest, AnOpThatNamesItsProgramStreamMatchesOnlyACallOnThatStream) {
  ReplayPlan plan = plan_;
  plan.ops[0].program_stream = 0x5000;  // a recording over several streams names each op's
  IterationMatcher matcher(plan, on_device);
  KernelCall kernel = recorded_kernel();
  kernel.stream = 0x6000;
  const CallCheck other = matcher.next(kernel);
  EXPECT_FALSE(other.matches);
  EXPECT_NE(other.mismatch.find("issued on stream 0x6000, recorded on 0x5000"), std::string::npos) << other.mismatch;
  EXPECT_EQ(matcher.position(), 0u);
  kernel.stream = 0x5000;
  EXPECT_TRUE(matcher.next(kernel).matches);
  // An op that names no stream (a one-stream recording) takes a call on any stream.
  EXPECT_TRUE(matcher.next(CopyCall{CopyDirection::HtoD, 0x560000001000, kBuffer, 256, 0x7000}).matches);
}

// A host copy the program runs itself may come on another of its streams (XLA's host-to-device
// streams in turn); the program orders it as it would eagerly.
TEST_F(CallCheckTest, ACallTheProgramRunsItselfMayComeOnAnotherOfItsStreams) {
  ReplayPlan plan = plan_;
  plan.ops[0].program_stream = 0x5000;
  plan.ops[1].program_stream = 0x5000;
  ASSERT_TRUE(runs_in_program(plan.ops[1]));
  IterationMatcher matcher(plan, on_device);
  KernelCall kernel = recorded_kernel();
  kernel.stream = 0x5000;
  ASSERT_TRUE(matcher.next(kernel).matches);
  EXPECT_TRUE(matcher.next(CopyCall{CopyDirection::HtoD, 0x560000001000, kBuffer, 256, 0x6000}).matches);
}

TEST_F(CallCheckTest, MatcherStopsAtTheFirstCallOfAnotherKindAndStaysThere) {
  IterationMatcher matcher(plan_, on_device);
  const CallCheck c = matcher.next(CopyCall{CopyDirection::HtoD, 0x560000001000, kBuffer, 256});
  EXPECT_FALSE(c.matches);
  EXPECT_NE(c.mismatch.find("task 0 (dropout): expected a kernel launch, the program issued a copy"), std::string::npos)
      << c.mismatch;
  EXPECT_EQ(matcher.position(), 0u);
  EXPECT_TRUE(matcher.next(recorded_kernel()).matches);  // the right call still matches
}

TEST_F(CallCheckTest, WithoutAParameterLayoutTheWholeBufferIsOnePatch) {
  Op op = plan_.ops[0];
  op.kernel.param_offsets.clear();
  KernelCall call = recorded_kernel();
  put(call, 8, 7);
  const CallCheck c = check_kernel_call(op, call, on_device);
  ASSERT_TRUE(c.matches) << c.mismatch;
  ASSERT_EQ(c.patches.size(), 1u);
  EXPECT_EQ(c.patches[0].offset, 0u);
  EXPECT_EQ(c.patches[0].bytes, call.args);
}

// What the executor writes into a graph node: the recorded bytes with the patches over them, and
// whether that changed anything (a patch equal to the recorded bytes needs no node write).
TEST(ApplyPatches, WritesEachPatchThatFitsAndSaysWhetherAnyByteChanged) {
  const std::vector<std::uint8_t> recorded = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<std::uint8_t> bytes = recorded;
  EXPECT_FALSE(apply_patches(bytes, {{2, {3, 4}}, {6, {}}}));  // the recorded bytes again, an empty patch
  EXPECT_EQ(bytes, recorded);
  EXPECT_FALSE(apply_patches(bytes, {{7, {9, 9}}}));  // past the end: left out
  EXPECT_EQ(bytes, recorded);
  EXPECT_TRUE(apply_patches(bytes, {{0, {1}}, {5, {0, 0}}}));
  EXPECT_EQ(bytes, (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 0, 0, 8}));
  EXPECT_EQ(with_patches(recorded, {{5, {0, 0}}}), bytes);
}

}  // namespace
}  // namespace nimble::replayer
