// build_plan: streams and waits from the schedule (task ids mapped to op indices), and the
// reduced dependency edges.
#include <gtest/gtest.h>

#include "nimble/scheduler/trace_schedule.hpp"
#include "test_util.hpp"

namespace nimble::replayer {
namespace {

using test::document;
using test::joined;
using test::kernel;
using test::parse;
using test::plan_of;

using Indices = std::vector<std::size_t>;

// Ids far from indices, so a mix-up of ids and op indices shows.
std::string hand_scheduled(int top_streams) {
  return document(kernel(10, "[]", R"("schedule": {"stream": 0, "waits": []})") + ",\n" +
                      kernel(20, "[]", R"("schedule": {"stream": 1, "waits": []})") + ",\n" +
                      kernel(30, "[10, 20]", R"("schedule": {"stream": 0, "waits": [20]})") + ",\n" +
                      kernel(40, "[20]", R"("schedule": {"stream": 1, "waits": []})") + ",\n" +
                      R"({"id": 50, "kind": "sync", "deps": [30, 40], "sync": "context", "schedule": {"stream": 0, "waits": [40]}})",
                  R"("schedule": {"algorithm": "by-hand", "streams": )" + std::to_string(top_streams) +
                      R"(, "syncs": 2})");
}

TEST(PlanSchedule, StreamsAndWaitsComeFromTheScheduleAsOpIndices) {
  const PlanResult r = plan_of(parse(hand_scheduled(2)));
  ASSERT_TRUE(r.plan) << joined(r);
  const auto& ops = r.plan->ops;
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_TRUE(r.plan->scheduled);
  EXPECT_EQ(r.plan->streams, 2);
  const std::vector<trace::TaskId> ids = {10, 20, 30, 40, 50};
  const std::vector<int> streams = {0, 1, 0, 1, 0};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].task, ids[i]);
    EXPECT_EQ(ops[i].stream, streams[i]) << "task " << ids[i];
  }
  EXPECT_TRUE(ops[0].waits.empty());
  EXPECT_TRUE(ops[1].waits.empty());
  EXPECT_EQ(ops[2].waits, Indices{1});  // task 20 is op 1
  EXPECT_TRUE(ops[3].waits.empty());
  EXPECT_EQ(ops[4].waits, Indices{3});  // task 40 is op 3
  EXPECT_EQ(ops[4].kind, OpKind::Nop);
}

TEST(PlanSchedule, DepsAreOpIndicesToo) {
  const PlanResult r = plan_of(parse(hand_scheduled(2)));
  ASSERT_TRUE(r.plan) << joined(r);
  const auto& ops = r.plan->ops;
  EXPECT_TRUE(ops[0].deps.empty());
  EXPECT_TRUE(ops[1].deps.empty());
  EXPECT_EQ(ops[2].deps, (Indices{0, 1}));
  EXPECT_EQ(ops[3].deps, Indices{1});
  EXPECT_EQ(ops[4].deps, (Indices{2, 3}));
}

TEST(PlanSchedule, StreamsIsTheScheduleCountEvenWhenSomeAreUnused) {
  const PlanResult r = plan_of(parse(hand_scheduled(3)));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->streams, 3);
}

TEST(PlanSchedule, UnscheduledTraceRunsOnOneStreamWithoutWaits) {
  const PlanResult r = plan_of(parse(document(kernel(0, "[]", R"("stream": 3)") + ",\n" +
                                              kernel(1, "[]", R"("stream": 5)") + ",\n" + kernel(2, "[0, 1]"))));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_FALSE(r.plan->scheduled);
  EXPECT_EQ(r.plan->streams, 1);
  for (const Op& op : r.plan->ops) {
    EXPECT_EQ(op.stream, 0) << "the program's own stream is not the replay stream";
    EXPECT_TRUE(op.waits.empty());
  }
  EXPECT_EQ(r.plan->ops[2].deps, (Indices{0, 1}));
}

TEST(PlanSchedule, ScheduledByTheSchedulerMatchesTheTrace) {
  // A diamond with a redundant edge 0 -> 3, and a task on its own.
  trace::Trace trace = parse(document(
      kernel(0, "[]", R"("duration_us": 10)") + ",\n" + kernel(1, "[0]", R"("duration_us": 30)") + ",\n" +
      kernel(2, "[0]", R"("duration_us": 30)") + ",\n" + kernel(3, "[0, 1, 2]", R"("duration_us": 5)") + ",\n" +
      kernel(4, "[]", R"("duration_us": 40)")));
  scheduler::schedule_trace(trace);
  ASSERT_TRUE(trace.schedule);
  ASSERT_GE(trace.schedule->streams, 2);  // 1 and 2 run side by side

  const PlanResult r = plan_of(trace);
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_TRUE(r.plan->scheduled);
  EXPECT_EQ(r.plan->streams, trace.schedule->streams);
  std::size_t waits = 0;
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    const Op& op = r.plan->ops[i];
    const trace::TaskSchedule& s = *trace.tasks[i].schedule;
    EXPECT_EQ(op.stream, s.stream) << "task " << i;
    ASSERT_EQ(op.waits.size(), s.waits.size()) << "task " << i;
    for (std::size_t w = 0; w < s.waits.size(); ++w) {
      EXPECT_EQ(static_cast<trace::TaskId>(op.waits[w]), s.waits[w]);  // ids are indices here
      EXPECT_NE(r.plan->ops[op.waits[w]].stream, op.stream) << "a wait is on another stream";
    }
    waits += op.waits.size();
  }
  EXPECT_EQ(static_cast<int>(waits), trace.schedule->syncs);
  EXPECT_NE(r.plan->ops[1].stream, r.plan->ops[2].stream);
  // The redundant edge 0 -> 3 is gone; 1 and 2 remain.
  EXPECT_EQ(r.plan->ops[3].deps, (Indices{1, 2}));
  EXPECT_EQ(r.plan->ops[1].deps, Indices{0});
  EXPECT_EQ(r.plan->ops[2].deps, Indices{0});
  EXPECT_TRUE(r.plan->ops[4].deps.empty());
}

TEST(PlanDeps, TransitivelyRedundantEdgesDisappear) {
  // 0 -> 1 -> 2 -> 3, plus 0 -> 2, 0 -> 3 and 1 -> 3 that the chain already implies, and a
  // repeated dependency.
  const PlanResult r = plan_of(parse(document(kernel(0, "[]") + ",\n" + kernel(1, "[0]") + ",\n" +
                                              kernel(2, "[0, 1]") + ",\n" + kernel(3, "[0, 1, 2]") + ",\n" +
                                              kernel(4, "[3, 0]"))));
  ASSERT_TRUE(r.plan) << joined(r);
  const auto& ops = r.plan->ops;
  EXPECT_TRUE(ops[0].deps.empty());
  EXPECT_EQ(ops[1].deps, Indices{0});
  EXPECT_EQ(ops[2].deps, Indices{1});
  EXPECT_EQ(ops[3].deps, Indices{2});
  EXPECT_EQ(ops[4].deps, Indices{3});
}

TEST(PlanDeps, IndependentEdgesStay) {
  // 2 depends on 0 and 1, which are unrelated: both edges are needed.
  const PlanResult r = plan_of(parse(document(kernel(7, "[]") + ",\n" + kernel(8, "[]") + ",\n" + kernel(9, "[8, 7]"))));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->ops[2].deps, (Indices{0, 1}));
}

}  // namespace
}  // namespace nimble::replayer
