// ShortCircuit: deferral, segment launches as soon as their calls matched, fall-back in order,
// re-arming, and the summary. A fake executor logs what it is asked to do.
#include <gtest/gtest.h>

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
  std::vector<std::uint64_t> last_host_ends;
  void launch_segment(std::size_t segment, const IterationMatcher& matched) override {
    log.push_back("launch " + std::to_string(segment));
    last_patches = matched.patches();
    last_host_ends = matched.host_ends();
  }
  void issue(const GpuCall& call) override {
    static const char* const names[] = {"kernel", "copy", "memset"};
    log.push_back(std::string("issue ") + names[call.index()]);
  }
};

class ShortCircuitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trace_ = test::parse(trace_text());
    PlanResult r = plan_of(trace_);
    ASSERT_TRUE(r.plan) << test::joined(r);
    plan_ = std::move(*r.plan);
  }
  KernelCall kernel(std::uint64_t seed = 42) const {
    const KernelOp& k = plan_.ops[0].kernel;
    KernelCall c{k.function, {k.grid[0], k.grid[1], k.grid[2]}, {k.block[0], k.block[1], k.block[2]}, k.shared_mem, k.args};
    std::memcpy(c.args.data() + 8, &seed, 8);
    return c;
  }
  static CopyCall htod(std::uint64_t bytes = 256) { return {CopyDirection::HtoD, 0x560000007000, kBuffer, bytes}; }
  MemsetCall memset() const {
    const MemsetOp& m = plan_.ops[2].memset;
    return {m.dst, 7, m.element_size, m.width, m.height, m.pitch};
  }
  static CopyCall dtoh() { return {CopyDirection::DtoH, kOther, 0x560000008000, 64}; }

  trace::Trace trace_;
  ReplayPlan plan_;
  LoggingExecutor executor_;
};

TEST_F(ShortCircuitTest, SegmentsEndAtSyncsAndCopiesToTheHost) {
  const auto s = segments_of(plan_);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].begin, 0u);
  EXPECT_EQ(s[0].end, 4u);  // kernel, HtoD, memset, sync
  EXPECT_EQ(s[1].begin, 4u);
  EXPECT_EQ(s[1].end, 5u);  // the DtoH copy
  const auto pieces = segments_of(plan_, 2);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].end, 2u);
  EXPECT_EQ(pieces[1].end, 4u);
}

TEST_F(ShortCircuitTest, AMatchingIterationIsDeferredAndLaunchedSegmentBySegment) {
  ShortCircuit sc(plan_, segments_of(plan_), on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel(1234)), Action::Deferred);
  EXPECT_TRUE(sc.armed());
  EXPECT_EQ(sc.on_call(htod()), Action::Deferred);
  EXPECT_TRUE(executor_.log.empty()) << "nothing launched before the segment's last call";
  EXPECT_EQ(sc.on_call(memset()), Action::Deferred);
  ASSERT_EQ(executor_.log, (std::vector<std::string>{"launch 0"}));  // before the program syncs
  ASSERT_EQ(executor_.last_patches[0].size(), 1u);                  // the new seed
  EXPECT_EQ(executor_.last_patches[0][0].offset, 8u);
  EXPECT_EQ(executor_.last_host_ends[1], 0x560000007000u);         // this iteration's host data
  sc.on_host_visible_point("synchronized");                          // nothing pending: no fall-back
  EXPECT_EQ(sc.on_call(dtoh()), Action::Deferred);
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"launch 0", "launch 1"}));
  EXPECT_EQ(executor_.last_host_ends[4], 0x560000008000u);
  // The next iteration begins: counted, and deferred again.
  EXPECT_EQ(sc.on_call(kernel(99)), Action::Deferred);
  EXPECT_EQ(sc.summary().iterations_replayed, 1u);
  EXPECT_EQ(sc.summary().segments_launched, 2u);
  EXPECT_EQ(sc.summary().calls_deferred, 5u);
  EXPECT_TRUE(sc.summary().fallbacks.empty());
}

TEST_F(ShortCircuitTest, AMismatchIssuesTheDeferredCallsInOrderThenRunsEagerly) {
  ShortCircuit sc(plan_, segments_of(plan_), on_device, executor_);
  EXPECT_EQ(sc.on_call(kernel()), Action::Deferred);
  EXPECT_EQ(sc.on_call(htod(128)), Action::Run);  // another size: the caller runs it itself
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue kernel"}));
  EXPECT_FALSE(sc.armed());
  ASSERT_EQ(sc.summary().fallbacks.size(), 1u);
  EXPECT_NE(sc.summary().fallbacks.begin()->first.find("task 1 (memcpy): copy size changed: 256 -> 128 bytes"),
            std::string::npos) << sc.summary().fallbacks.begin()->first;
  // Eager from here: calls that are not the iteration's first run as they are.
  EXPECT_EQ(sc.on_call(memset()), Action::Run);
  EXPECT_EQ(sc.on_call(dtoh()), Action::Run);
  // The recorded iteration shows up again: armed again.
  EXPECT_EQ(sc.on_call(kernel()), Action::Deferred);
  EXPECT_TRUE(sc.armed());
  EXPECT_EQ(executor_.log.size(), 1u);
}

TEST_F(ShortCircuitTest, LookingAtResultsMidSegmentFallsBack) {
  ShortCircuit sc(plan_, segments_of(plan_), on_device, executor_);
  sc.on_call(kernel());
  sc.on_call(htod());
  sc.on_host_visible_point("queried an event");
  EXPECT_EQ(executor_.log, (std::vector<std::string>{"issue kernel", "issue copy"}));
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
  EXPECT_NE(sc.summary_text().find("2 iteration(s) replayed (4 segment launches, 8 calls deferred); 0 fall-back(s)"),
            std::string::npos) << sc.summary_text();
}

}  // namespace
}  // namespace nimble::replayer
