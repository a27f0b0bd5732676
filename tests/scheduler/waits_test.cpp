#include <gtest/gtest.h>

#include "nimble/scheduler/reduction.hpp"
#include "nimble/scheduler/waits.hpp"
#include "oracle.hpp"

namespace nimble::scheduler {
namespace {

// Any assignment is a valid schedule once cross-stream MEG edges become waits, so random ones
// exercise pruning far beyond what the scheduler produces.
StreamAssignment random_assignment(std::size_t n, std::uint32_t streams, std::mt19937_64& rng) {
  StreamAssignment a;
  for (std::size_t v = 0; v < n; ++v) a.stream_of.push_back(std::uniform_int_distribution<std::uint32_t>(0, streams - 1)(rng));
  renumber_streams(a);
  return a;
}

TEST(Waits, BothPruningMethodsKeepExactlyTheWaitsNoPathImplies) {
  std::mt19937_64 rng(8);
  for (int i = 0; i < 1500 && !HasFailure(); ++i) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 45)(rng);
    const Dag dag = testing::random_dag(n, i % 2 ? 0.08 : 0.25, rng);
    const Adjacency meg = transitive_reduction(predecessor_adjacency(dag));
    const StreamAssignment a = random_assignment(n, 1 + i % 6, rng);
    SCOPED_TRACE("case " + std::to_string(i));
    const Waits all = cross_stream_waits(meg, a);
    Waits by_clocks = all, by_reach = all;
    const std::size_t removed_clocks = prune_implied_waits(by_clocks, a, WaitPruning::vector_clocks);
    const std::size_t removed_reach = prune_implied_waits(by_reach, a, WaitPruning::reachability, 2);
    EXPECT_EQ(by_clocks, by_reach);
    EXPECT_EQ(removed_clocks, removed_reach);
    EXPECT_EQ(count_waits(all) - removed_clocks, count_waits(by_clocks));

    // Same order as with every wait, and each kept wait is needed.
    const auto full = testing::floyd_warshall(testing::sync_graph(a, all));
    const auto pruned = testing::floyd_warshall(testing::sync_graph(a, by_clocks));
    EXPECT_EQ(full, pruned);
    for (NodeIndex v = 0; v < n; ++v) {
      for (NodeIndex u : by_clocks[v]) {
        Waits without = by_clocks;
        std::erase(without[v], u);
        EXPECT_FALSE(testing::floyd_warshall(testing::sync_graph(a, without))[u][v]) << "wait " << u << "->" << v;
      }
    }
  }
}

TEST(Waits, CrossStreamWaitsEnforceEveryDependency) {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 300 && !HasFailure(); ++i) {
    const Dag dag = testing::random_dag(30, 0.15, rng);
    const StreamAssignment a = random_assignment(30, 4, rng);
    const auto reach = testing::floyd_warshall(
        testing::sync_graph(a, cross_stream_waits(transitive_reduction(predecessor_adjacency(dag)), a)));
    for (NodeIndex v = 0; v < 30; ++v) {
      for (NodeIndex u : dag.predecessors[v]) EXPECT_TRUE(reach[u][v]);
    }
  }
}

TEST(Waits, WaitImpliedThroughAnotherStreamIsDropped) {
  // Streams: A = {0, 2}, B = {1, 3}. 3 waits on 0 and on 2; 2 already waited on 0 via stream order.
  const StreamAssignment a{{0, 1, 0, 1}, 2};
  Waits waits{{}, {}, {}, {0, 2}};
  EXPECT_EQ(prune_implied_waits(waits, a), 1u);
  EXPECT_EQ(waits[3], std::vector<NodeIndex>{2});
}

}  // namespace
}  // namespace nimble::scheduler
