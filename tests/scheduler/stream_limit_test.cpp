#include <gtest/gtest.h>

#include "nimble/scheduler/schedule.hpp"
#include "oracle.hpp"

namespace nimble::scheduler {
namespace {

// X(8) and the chain A(10) -> C(50) start at once; D(10) also follows A, so it runs from 10 to 20
// on a third stream. With two streams X belongs with D (idle while X runs: makespan stays 60);
// putting X before A on A's stream would make it 68.
TEST(StreamLimit, MergesTheStreamThatOverlapsLeast) {
  const Dag dag{.predecessors = {{}, {}, {1}, {1}}, .durations_us = {8.0, 10.0, 50.0, 10.0}};
  const auto unlimited = schedule_dag(dag);
  ASSERT_EQ(unlimited.stats.streams, 3u);
  const auto limited = schedule_dag(dag, {.max_streams = 2});
  const auto& stream_of = limited.schedule.assignment.stream_of;
  EXPECT_EQ(limited.stats.streams, 2u);
  EXPECT_EQ(stream_of[0], stream_of[3]);
  EXPECT_DOUBLE_EQ(limited.stats.makespan_us, 60);
}

TEST(StreamLimit, RespectsTheLimitOnRandomDagsAndStaysSound) {
  std::mt19937_64 rng(10);
  for (int i = 0; i < 600 && !HasFailure(); ++i) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
    const Dag dag = testing::random_dag(n, 0.05, rng);
    const std::uint32_t limit = 1 + i % 4;
    const auto r = schedule_dag(dag, {.max_streams = limit});
    SCOPED_TRACE("dag " + std::to_string(i));
    EXPECT_LE(r.stats.streams, limit);
    const auto reach = testing::floyd_warshall(testing::sync_graph(r.schedule.assignment, r.schedule.waits));
    for (NodeIndex v = 0; v < n; ++v) {
      for (NodeIndex u : dag.predecessors[v]) EXPECT_TRUE(reach[u][v]);
    }
    const auto unlimited = schedule_dag(dag);
    EXPECT_EQ(r.stats.streams, std::min<std::size_t>(limit, unlimited.stats.streams));
    EXPECT_GE(r.stats.makespan_us, unlimited.stats.makespan_us);
  }
}

}  // namespace
}  // namespace nimble::scheduler
