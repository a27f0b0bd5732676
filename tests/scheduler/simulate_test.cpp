// The makespan model on cases small enough to compute by hand.
#include <gtest/gtest.h>

#include "nimble/scheduler/schedule.hpp"
#include "nimble/scheduler/priorities.hpp"
#include "nimble/scheduler/simulate.hpp"
#include "nimble/scheduler/width.hpp"

namespace nimble::scheduler {
namespace {

// A(10) -> {B(5), C(7)} -> D(2)
Dag fork_join() { return {.predecessors = {{}, {0}, {0}, {1, 2}}, .durations_us = {10.0, 5.0, 7.0, 2.0}}; }

TEST(Simulate, ForkJoinRunsBothBranchesAtOnce) {
  const auto r = schedule_dag(fork_join());
  EXPECT_EQ(r.stats.streams, 2u);
  EXPECT_EQ(r.stats.waits, 2u);  // 4 MEG edges, 2 matched
  EXPECT_DOUBLE_EQ(r.stats.serial_us, 24);
  EXPECT_DOUBLE_EQ(r.stats.critical_path_us, 19);  // A, C, D
  EXPECT_DOUBLE_EQ(r.stats.makespan_us, 19);
}

TEST(Simulate, ForkJoinOnOneStreamTakesTheSum) {
  EXPECT_DOUBLE_EQ(schedule_dag(fork_join(), {.max_streams = 1}).stats.makespan_us, 24);
}

TEST(Simulate, ScheduleStartsTasksAfterStreamPredecessorAndWaits) {
  // Stream 0: 0(3), 2(1); stream 1: 1(5), 3(2). 2 waits on 1, 3 waits on 0.
  const StreamAssignment a{{0, 1, 0, 1}, 2};
  const Waits waits{{}, {}, {1}, {0}};
  const std::vector<double> d{3, 5, 1, 2};
  const Timeline t = simulate_schedule(a, waits, d);
  EXPECT_EQ(t.start_us, (std::vector<double>{0, 0, 5, 5}));
  EXPECT_EQ(t.finish_us, (std::vector<double>{3, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(t.makespan_us, 7);
}

TEST(Simulate, EarliestTimelineSlackAndConcurrency) {
  // 0(4) -> 2(1); 1(2) -> 2; 3(1) independent.
  const Adjacency preds = make_adjacency({{}, {}, {0, 1}, {}});
  const std::vector<double> d{4, 2, 1, 1};
  const Timeline t = earliest_timeline(preds, d);
  EXPECT_EQ(t.start_us, (std::vector<double>{0, 0, 4, 0}));
  EXPECT_DOUBLE_EQ(t.makespan_us, 5);
  EXPECT_EQ(slack_us(preds, d, t), (std::vector<double>{0, 2, 0, 4}));
  EXPECT_EQ(max_concurrency(t), 3u);  // 0, 1 and 3 all start at 0
}

TEST(Simulate, ConcurrencyIgnoresZeroLengthTasksAndTouchingIntervals) {
  Timeline t{{0, 2, 2}, {2, 4, 2}, 4};
  EXPECT_EQ(max_concurrency(t), 1u);
}

// Each case is won by a different antichain; the bound must find all three.
TEST(Width, LowerBoundFindsAntichainsOfEqualDepthEqualHeightAndConcurrentTasks) {
  auto bound = [](const std::vector<std::vector<NodeIndex>>& lists, std::vector<double> durations) {
    const Adjacency preds = make_adjacency(lists);
    return width_lower_bound(preds, earliest_timeline(preds, durations));
  };
  const std::vector<double> zero(7, 0.0);  // zero-length tasks never run "at once"
  // 0 -> {1, 2, 3}; 1 -> 6; 2 -> 5; 3 -> 4 -> 5 -> 6. Depth 1 holds 1, 2, 3; no height level has 3.
  EXPECT_EQ(bound({{}, {0}, {0}, {0}, {3}, {2, 4}, {1, 5}}, zero), 3u);
  // 0 -> 1 -> 2, 0 -> 3, 4: the sinks 2, 3, 4 share height 0; no depth level has 3.
  EXPECT_EQ(bound({{}, {0}, {1}, {0}, {}}, std::vector<double>(5, 0.0)), 3u);
  // 0(3), 1(5), 2(5) after 0, 3(1) after 0, 4(1) after 1 and 3: levels hold 2, but 1, 2, 3 all
  // run at time 3.
  EXPECT_EQ(bound({{}, {}, {0}, {0}, {1, 3}}, {3, 5, 5, 1, 1}), 3u);
}

TEST(Simulate, CriticalStreamsGetTheHighestPriority) {
  // X(10) -> Y(10) is the critical path; Z(1) has 19 us of slack.
  const Dag dag{.predecessors = {{}, {0}, {}}, .durations_us = {10.0, 10.0, 1.0}};
  const auto r = schedule_dag(dag);
  ASSERT_EQ(r.stats.streams, 2u);
  EXPECT_EQ(r.schedule.stream_priorities, (std::vector<int>{0, 1}));
  EXPECT_EQ(schedule_dag(dag, {.priority_levels = 1}).schedule.stream_priorities, (std::vector<int>{0, 0}));
}

TEST(Simulate, PriorityLevelsSpreadByLeastSlack) {
  const StreamAssignment a{{0, 1, 2, 3}, 4};
  const std::vector<double> slack{0, 30, 10, 20};
  // Stream 0 is critical. The others, by slack 10, 20, 30, take levels 1 and 2 in equal shares
  // of their ranks: ranks 0 and 1 get level 1, rank 2 gets level 2.
  EXPECT_EQ(stream_priorities(a, slack, 100, 3), (std::vector<int>{0, 2, 1, 1}));
  EXPECT_EQ(stream_priorities(a, slack, 100, 4), (std::vector<int>{0, 3, 1, 2}));
}

}  // namespace
}  // namespace nimble::scheduler
