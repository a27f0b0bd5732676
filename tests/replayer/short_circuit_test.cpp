// ShortCircuit: deferral, segment launches as soon as their calls matched, fall-back in order,
// re-arming, and the summary. A fake executor logs what it is asked to do.
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "call_trace.hpp"
#include "nimble/replayer/short_circuit.hpp"

namespace nimble::replayer {
namespace {

using test::plan_of;

struct LoggingExecutor : Executor {
  std::vector<std::string> log;
  std::vector<std::vector<ArgPatch>> last_patches;
  bool fail_launches = false;
  void launch_segment(std::size_t segment, const IterationMatcher& matched) override {
    if (fail_launches) throw std::runtime_error("cuGraphLaunch failed: CUDA_ERROR_LAUNCH_FAILED");
    log.push_back("launch " + std::to_string(segment));
    last_patches = matched.patches();
  }
  void issue(std::size_t op, const GpuCall& call) override {
    static const char* const names[] = {"kernel", "copy", "memset", "graph"};
    log.push_back("issue " + std::to_string(op) + " " + names[call.index()]);
    issued.push_back(call);
  }
  std::vector<GpuCall> issued;
};

class ShortCircuitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = test::parse(trace_text());
    PlanResult r = plan_of(trace_);
    ASSERT_TRUE(r.plan) << test::joined(r);
    plan_ = std::move(*r.plan);
    // The same iteration with a device-to-device copy where the HtoD copy was: its first three
    // ops (kernel, copy, memset) and the sync form one segment.
    device_only_ = plan_;
    device_only_.ops[1].copy.direction = CopyDirection::DtoD;
    device_only_.ops[1].copy.src = kOther;
  }
  KernelCall kernel(std::uint64_t seed = 42) const {
    const KernelOp& k = plan_.ops[0].kernel;
    KernelCall c{k.function, {k.grid[0], k.grid[1], k.grid[2]}, {k.block[0], k.block[1], k.block[2]}, k.shared_mem, k.args};
    std::memcpy(c.args.data() + 8, &seed, 8);
    return c;
  }
  static CopyCall htod(std::uint64_t bytes = 256) { return {CopyDirection::HtoD, 0x560000007000, kBuffer, bytes}; }
  static CopyCall dtod() { return {CopyDirection::DtoD, kOther, kBuffer, 256}; }
  MemsetCall memset(std::uint64_t dst = kOther) const {
    const MemsetOp& m = plan_.ops[2].memset;
    return {dst, 7, m.element_size, m.width, m.height, m.pitch};
  }
  static CopyCall dtoh() { return {CopyDirection::DtoH, kOther, 0x560000008000, 64}; }

  trace::Trace trace_;
  ReplayPlan plan_, device_only_;
  LoggingExecutor executor_;
};

TEST_F(ShortCircuitTest, SegmentsAreCutAroundHostCopiesAndAtSyncs) {
  const auto s = segments_of(plan_);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].end, 1u);  // the kernel
  EXPECT_FALSE(s[0].program_runs);
  EXPECT_TRUE(s[1].program_runs);  // the HtoD copy, on its own
  EXPECT_EQ(s[1].begin, 1u);
  EXPECT_EQ(s[2].begin, 2u);
  EXPECT_EQ(s[2].end, 4u);  // memset, sync
  EXPECT_TRUE(s[3].program_runs);  // the DtoH copy
  const auto whole = segments_of(device_only_);
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(whole[0].end, 4u);  // kernel, DtoD copy, memset, sync
  const auto pieces = segments_of(device_only_, 2);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].end, 2u);
  EXPECT_EQ(pieces[1].end, 4u);
}

TEST_F(ShortCircuitTest, ACollectiveKernelIsASegmentTheProgramRuns) {
  ReplayPlan plan = device_only_;
  plan.ops[0].name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  EXPECT_TRUE(runs_in_program(plan.ops[0]));
  plan.ops[0].name = "ncclKernel_AllGather_RING_LL_Sum_int8_t";  // NCCL before 2.19
  EXPECT_TRUE(runs_in_program(plan.ops[0]));
  const auto s = segments_of(plan);
  ASSERT_GE(s.size(), 2u);
  EXPECT_TRUE(s[0].program_runs);
  EXPECT_EQ(s[0].end, 1u);
  EXPECT_FALSE(s[1].program_runs);
  plan.ops[0].name = "my_nccl_like_kernel";  // only NCCL's own names
  EXPECT_FALSE(runs_in_program(plan.ops[0]));
}

// The program's own graph launch: its segment of one, run by the program's call once everything
// before it is launched; another executable is a mismatch (the deferred calls go out first).
TEST_F(ShortCircuitTest, TheProgramsOwnGraphLaunchRunsInPlaceAfterWhatCameBefore) {
  ReplayPlan plan = device_only_;
  plan.ops[1].kind = OpKind::Graph;
  plan.ops[1].graph_exec = 0x9900;
  EXPECT_TRUE(runs_in_program(plan.ops[1]));
  const auto segments = segments_of(plan);
  ASSERT_EQ(segments.size(), 4u);  // kernel; the graph; memset and sync; the DtoH copy
  EXPECT_TRUE(segments[1].program_runs);
  EXPECT_EQ(segments[1].begin, 1u);
  EXPECT_EQ(segments[1].end, 2u);
  ShortCircuit sc(plan, segments, on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel(1)), Action::Deferred);
  EXPECT_EQ(sc.on_call(GraphLaunchCall{0x9900}), Action::Run);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0"}));  // the kernel is on the GPU before the graph
  EXPECT_EQ(sc.on_call(memset()), Action::Deferred);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0", "launch 2"}));
  EXPECT_EQ(sc.summary().program_graphs, 1u);
  EXPECT_EQ(sc.on_call(dtoh()), Action::Run);
  EXPECT_EQ(sc.on_call(kernel(2)), Action::Deferred);  // the next iteration: its kernel is launched at once
  EXPECT_EQ(sc.on_call(GraphLaunchCall{0x7777}), Action::Run);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0", "launch 2", "launch 0"}));
  ASSERT_EQ(sc.summary().fallbacks.size(), 1u);
  EXPECT_NE(sc.summary().fallbacks.begin()->first.find("a different graph of the program's (recorded exec 0x9900, launched 0x7777)"),
            std::string::npos)
      << sc.summary().fallbacks.begin()->first;
  EXPECT_EQ(sc.summary().program_graphs, 1u);
  EXPECT_EQ(std::get<GraphLaunchCall>(recorded_call(plan.ops[1], {})).exec, 0x9900u);
}

// An iteration whose recording begins with ops that launch nothing (a sync; the nodes of the
// program's graph before its launch) and then a call the program runs itself: the call runs, and
// is not held (it was once held and then dropped with the empty segments, a lost graph launch).
TEST_F(ShortCircuitTest, ACallTheProgramRunsRightAfterLeadingSyncsOrGraphNodesRuns) {
  for (const bool graph : {true, false}) {
    ReplayPlan plan;
    Op sync;
    sync.kind = OpKind::Nop;
    plan.ops = {sync, sync, graph ? Op{} : plan_.ops[1], plan_.ops[0]};
    if (graph) {
      plan.ops[2].kind = OpKind::Graph;
      plan.ops[2].graph_exec = 0x9900;
    }
    LoggingExecutor executor;
    ShortCircuit sc(plan, segments_of(plan), on_device, executor);
    const GpuCall first = graph ? GpuCall(GraphLaunchCall{0x9900}) : GpuCall(htod());
    for (int iteration = 0; iteration < 2; ++iteration) {
      EXPECT_EQ(sc.on_call(first), Action::Run) << graph;
      EXPECT_FALSE(sc.holding()) << graph;
      EXPECT_EQ(sc.on_call(kernel(iteration)), Action::Deferred) << graph;
    }
    EXPECT_EQ(graph ? sc.summary().program_graphs : sc.summary().host_copies, 2u) << graph;
    EXPECT_EQ(sc.summary().calls_deferred, 2u) << graph;
    EXPECT_EQ(executor.log, (std::vector<std::string>{"launch 3", "launch 3"})) << graph;
  }
}

TEST_F(ShortCircuitTest, DeferredCallsAreLaunchedWhenTheirSegmentHasMatched) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel(1234)), Action::Deferred);
  EXPECT_TRUE(sc.armed());
  EXPECT_EQ(sc.on_call(dtod()), Action::Deferred);
  EXPECT_TRUE(executor_.log.empty()) << "nothing launched before the segment's last call";
  EXPECT_EQ(sc.on_call(memset()), Action::Deferred);
  ASSERT_EQ(executor_.log, (std::vector<std::string>{"launch 0"}));  // before the program syncs
  ASSERT_EQ(executor_.last_patches[0].size(), 1u);                  // the new seed
  EXPECT_EQ(executor_.last_patches[0][0].offset, 8u);
  sc.on_host_visible_point("synchronized");                          // nothing pending: no fall-back
  EXPECT_EQ(sc.on_call(dtoh()), Action::Run);                         // the program copies its result itself
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0"}));
  // The next iteration begins: counted, and deferred again.
  EXPECT_TRUE(sc.awaiting_iteration());
  EXPECT_EQ(sc.on_call(kernel(99)), Action::Deferred);
  EXPECT_EQ(sc.summary().iterations_replayed, 1u);
  EXPECT_EQ(sc.summary().segments_launched, 1u);
  EXPECT_EQ(sc.summary().calls_deferred, 4u);
  EXPECT_EQ(sc.summary().host_copies, 1u);
  EXPECT_TRUE(sc.summary().fallbacks.empty());
}

TEST_F(ShortCircuitTest, HostCopiesRunInPlaceAfterEverythingBeforeThemIsLaunched) {
  ShortCircuit sc(plan_, segments_of(plan_), on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel()), Action::Deferred);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0"}));  // the HtoD copy comes next
  EXPECT_EQ(sc.on_call(htod()), Action::Run);
  EXPECT_EQ(sc.on_call(memset()), Action::Deferred);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0", "launch 2"}));
  EXPECT_EQ(sc.on_call(dtoh()), Action::Run);
  EXPECT_EQ(sc.summary().host_copies, 2u);
}

TEST_F(ShortCircuitTest, AMismatchIssuesTheDeferredCallsInOrderThenRunsEagerly) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel()), Action::Deferred);
  EXPECT_EQ(sc.on_call(dtod()), Action::Deferred);
  EXPECT_EQ(sc.on_call(memset(kBuffer)), Action::Run);  // another target: the caller runs it itself
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue 0 kernel", "issue 1 copy"}));
  EXPECT_FALSE(sc.armed());
  ASSERT_EQ(sc.summary().fallbacks.size(), 1u);
  EXPECT_NE(sc.summary().fallbacks.begin()->first.find("task 2 (memset): memset target changed"), std::string::npos)
      << sc.summary().fallbacks.begin()->first;
  // Eager from here: calls that are not the iteration's first run as they are.
  EXPECT_EQ(sc.on_call(dtod()), Action::Run);
  EXPECT_EQ(sc.on_call(dtoh()), Action::Run);
  // The recorded iteration shows up again: armed again.
  EXPECT_EQ(sc.on_call(kernel()), Action::Deferred);
  EXPECT_TRUE(sc.armed());
  EXPECT_EQ(executor_.log.size(), 2u);
}

TEST_F(ShortCircuitTest, AMismatchRightAfterTheFirstOpIsAFalseStartNotAFallBack) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel()), Action::Deferred);
  EXPECT_EQ(sc.on_call(memset()), Action::Run);  // the program is elsewhere: not the recorded iteration
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue 0 kernel"}));
  EXPECT_TRUE(sc.summary().fallbacks.empty());
  EXPECT_EQ(sc.summary().false_starts, 1u);
  EXPECT_EQ(sc.summary().false_start_reasons.size(), 1u);  // why that iteration ran plain
  EXPECT_NE(sc.summary_text().find("0 fall-back(s), 1 false start(s)"), std::string::npos) << sc.summary_text();
}

// The program recorded an event after the kernel when the iteration was recorded: the segment
// ends there, so when it records the event again everything before is on the GPU (no fall-back).
TEST_F(ShortCircuitTest, ASegmentEndsWhereTheProgramRecordedAnEvent) {
  const auto s = segments_of(device_only_, 0, {1});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].end, 1u);  // the kernel
  EXPECT_EQ(s[1].end, 4u);  // DtoD copy, memset, sync
  ShortCircuit sc(device_only_, s, on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel()), Action::Deferred);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0"}));
  sc.on_host_visible_point("recorded an event");
  EXPECT_EQ(sc.on_call(dtod()), Action::Deferred);
  EXPECT_EQ(sc.on_call(memset()), Action::Deferred);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0", "launch 1"}));
  EXPECT_TRUE(sc.summary().fallbacks.empty());
  // Without the break the same event record falls back.
  LoggingExecutor other;
  ShortCircuit whole(device_only_, segments_of(device_only_), on_device, other);
  whole.on_call(kernel());
  whole.on_host_visible_point("recorded an event");
  EXPECT_EQ(other.log, (std::vector<std::string>{"issue 0 kernel"}));
  EXPECT_EQ(whole.summary().fallbacks.size(), 1u);
}

TEST_F(ShortCircuitTest, LookingAtResultsMidSegmentFallsBack) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_);
  sc.on_call(kernel());
  sc.on_call(dtod());
  sc.on_host_visible_point("queried an event");
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue 0 kernel", "issue 1 copy"}));
  EXPECT_FALSE(sc.armed());
  EXPECT_EQ(sc.summary().fallbacks.count("the program queried an event in the middle of a recorded segment"), 1u);
  EXPECT_NE(sc.summary_text().find("0 iteration(s) replayed"), std::string::npos) << sc.summary_text();
  EXPECT_NE(sc.summary_text().find("1 fall-back(s):\n  1x the program queried an event"), std::string::npos)
      << sc.summary_text();
}

TEST_F(ShortCircuitTest, WorkBeforeTheIterationRunsUntouched) {
  ShortCircuit sc(plan_, segments_of(plan_), on_device, executor_);
  EXPECT_EQ(sc.on_call(htod()), Action::Run);
  EXPECT_EQ(sc.on_call(memset()), Action::Run);
  sc.on_host_visible_point("synchronized");
  EXPECT_FALSE(sc.armed());
  EXPECT_TRUE(executor_.log.empty());
  EXPECT_TRUE(sc.summary().fallbacks.empty());
}

TEST_F(ShortCircuitTest, SummaryCountsACompletedLastIteration) {
  ShortCircuit sc(plan_, segments_of(plan_), on_device, executor_);
  for (int i = 0; i < 2; ++i) {
    sc.on_call(kernel());
    sc.on_call(htod());
    sc.on_call(memset());
    sc.on_call(dtoh());
  }
  EXPECT_NE(sc.summary_text().find("2 iteration(s) replayed (4 segment launches, 4 calls deferred, 4 host copies run in "
                                   "place); 0 fall-back(s)"),
            std::string::npos) << sc.summary_text();
}

TEST_F(ShortCircuitTest, AFailedLaunchIssuesTheCallsItselfAndStopsReplaying) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_);
  executor_.fail_launches = true;
  sc.on_call(kernel());
  sc.on_call(dtod());
  EXPECT_EQ(sc.on_call(memset()), Action::Deferred);  // matched; the failed launch then issued it
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue 0 kernel", "issue 1 copy", "issue 2 memset"}));
  EXPECT_TRUE(sc.stopped());
  ASSERT_EQ(sc.summary().fallbacks.size(), 1u);
  EXPECT_NE(sc.summary().fallbacks.begin()->first.find("CUDA_ERROR_LAUNCH_FAILED"), std::string::npos);
  EXPECT_EQ(sc.on_call(kernel()), Action::Run);  // never re-armed
  EXPECT_TRUE(sc.failed());
  EXPECT_FALSE(sc.resume());  // not even for a recording's next trial
  EXPECT_EQ(sc.on_call(kernel()), Action::Run);
}

TEST_F(ShortCircuitTest, FinishIssuesWhatIsPendingAndCountsAWholeIteration) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_);
  sc.on_call(kernel());
  sc.on_call(dtod());
  sc.finish("the program ended");
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue 0 kernel", "issue 1 copy"}));
  EXPECT_EQ(sc.summary().fallbacks.count("the program ended"), 1u);
  ShortCircuit whole(device_only_, segments_of(device_only_), on_device, executor_);
  whole.on_call(kernel());
  whole.on_call(dtod());
  whole.on_call(memset());
  whole.on_call(dtoh());
  whole.finish("the program ended");
  EXPECT_EQ(whole.summary().iterations_replayed, 1u);
  EXPECT_TRUE(whole.summary().fallbacks.empty());
  EXPECT_EQ(whole.on_call(kernel()), Action::Run);
  // A recording that rested is tried again: it may arm after finish().
  EXPECT_FALSE(whole.failed());
  EXPECT_TRUE(whole.resume());
  EXPECT_EQ(whole.on_call(kernel()), Action::Deferred);
  EXPECT_TRUE(whole.armed());
}

// A library call at ops 1 and 2 (the DtoD copy and the memset), skipped: its ops come from the
// memo with their patches, as if the library had launched them.
TEST_F(ShortCircuitTest, ASkippedLibraryCallsOpsAreTakenWithTheMemosPatches) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_, ArgumentRule::AnyBytes);
  EXPECT_EQ(sc.on_call(kernel(42)), Action::Deferred);
  ASSERT_EQ(sc.position(), 1u);
  std::vector<std::vector<ArgPatch>> memo(2);
  memo[1].push_back({0, {9, 0, 0, 0}});  // the memset's value
  sc.on_skipped_call(memo);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0"})) << "ops 0..3 matched: the segment went";
  ASSERT_EQ(executor_.last_patches.size(), device_only_.ops.size());
  EXPECT_TRUE(executor_.last_patches[1].empty());
  EXPECT_EQ(executor_.last_patches[2], memo[1]);
  EXPECT_EQ(sc.summary().ops_of_skipped_calls, 2u);
  EXPECT_EQ(sc.on_call(dtoh()), Action::Run);
  EXPECT_EQ(sc.summary().calls_deferred, 1u) << "the skipped ops are not program calls";
}

TEST_F(ShortCircuitTest, OnFallBackASkippedCallsOpsAreIssuedWithTheMemosBytes) {
  ShortCircuit sc(device_only_, segments_of(device_only_), on_device, executor_, ArgumentRule::AnyBytes);
  EXPECT_EQ(sc.on_call(kernel(42)), Action::Deferred);
  std::vector<std::vector<ArgPatch>> memo(1);  // a call of one op: the DtoD copy, from elsewhere
  const std::uint64_t moved = kOther + 64;
  ArgPatch src{kCopySource, std::vector<std::uint8_t>(8)};
  std::memcpy(src.bytes.data(), &moved, 8);
  memo[0].push_back(src);
  sc.on_skipped_call(memo);
  EXPECT_TRUE(executor_.log.empty());
  sc.on_host_visible_point("synchronized a stream");  // before the memset: the segment falls back
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue 0 kernel", "issue 1 copy"}));
  ASSERT_EQ(executor_.issued.size(), 2u);
  const auto* copy = std::get_if<CopyCall>(&executor_.issued[1]);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->src, moved);
  EXPECT_EQ(copy->dst, device_only_.ops[1].copy.dst);
  EXPECT_EQ(copy->bytes, 256u);
}

TEST(RecordedCall, AppliesPatchesToKernelArgumentsAndMemsetValues) {
  const auto r = plan_of(test::parse(trace_text()));
  ASSERT_TRUE(r.plan);
  const KernelCall k = std::get<KernelCall>(recorded_call(r.plan->ops[0], {{8, {1, 2}}}));
  EXPECT_EQ(k.function, r.plan->ops[0].kernel.function);
  EXPECT_EQ(k.args[8], 1);
  EXPECT_EQ(k.args[9], 2);
  EXPECT_EQ(k.args[0], r.plan->ops[0].kernel.args[0]);
  const MemsetCall m = std::get<MemsetCall>(recorded_call(r.plan->ops[2], {{0, {5, 0, 0, 0}}}));
  EXPECT_EQ(m.value, 5u);
  EXPECT_EQ(m.dst, kOther);
  EXPECT_EQ(m.width, r.plan->ops[2].memset.width);
}

}  // namespace
}  // namespace nimble::replayer
