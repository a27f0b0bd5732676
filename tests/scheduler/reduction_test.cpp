#include <gtest/gtest.h>

#include "nimble/scheduler/reduction.hpp"
#include "oracle.hpp"

namespace nimble::scheduler {
namespace {

using testing::floyd_warshall;
using testing::random_dag;
using testing::reduction_by_closure;

std::vector<std::pair<NodeIndex, NodeIndex>> edge_list(const Adjacency& preds) {
  std::vector<std::pair<NodeIndex, NodeIndex>> edges;
  for (NodeIndex v = 0; v < preds.nodes(); ++v) {
    for (NodeIndex u : preds[v]) edges.emplace_back(u, v);
  }
  return edges;
}

TEST(Reduction, MatchesFloydWarshallOnThousandsOfRandomSmallDags) {
  std::mt19937_64 rng(1);
  const double densities[] = {0.02, 0.05, 0.1, 0.2, 0.35, 0.6, 0.9};
  for (int i = 0; i < 3000 && !HasFailure(); ++i) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 60)(rng);
    const double density = densities[i % std::size(densities)];
    SCOPED_TRACE("dag " + std::to_string(i) + ", n " + std::to_string(n) + ", density " + std::to_string(density));
    const Dag dag = random_dag(n, density, rng);
    const auto meg = transitive_reduction(predecessor_adjacency(dag), {.threads = 1});
    EXPECT_EQ(edge_list(meg), reduction_by_closure(dag, floyd_warshall(dag.predecessors)));
  }
}

// Small memory budgets force blocks of 64 sources, so reach sets cross block boundaries; several
// workers take blocks concurrently.
TEST(Reduction, MatchesOracleAcrossManyBlocksAndThreads) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 24 && !HasFailure(); ++i) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(150, 320)(rng);
    const double density = i % 3 == 0 ? 0.01 : i % 3 == 1 ? 0.03 : 0.2;
    SCOPED_TRACE("dag " + std::to_string(i) + ", n " + std::to_string(n));
    const Dag dag = random_dag(n, density, rng);
    const auto expected = reduction_by_closure(dag, floyd_warshall(dag.predecessors));
    for (unsigned threads : {1u, 3u}) {
      const auto meg = transitive_reduction(predecessor_adjacency(dag), {.threads = threads, .memory_per_thread = 1});
      EXPECT_EQ(edge_list(meg), expected) << threads << " threads";
    }
  }
}

TEST(Reduction, ChainWithAllSkipEdgesReducesToTheChain) {
  Dag dag;
  dag.predecessors.resize(200);
  for (NodeIndex v = 1; v < 200; ++v) {
    for (NodeIndex u = 0; u < v; ++u) dag.predecessors[v].push_back(u);
  }
  const auto meg = transitive_reduction(predecessor_adjacency(dag), {.memory_per_thread = 1});
  ASSERT_EQ(meg.edges(), 199u);
  for (NodeIndex v = 1; v < 200; ++v) EXPECT_EQ(meg[v][0], v - 1);
}

TEST(Reduction, DiamondKeepsEveryEdgeButTheShortcut) {
  Dag dag{.predecessors = {{}, {0}, {0}, {1, 2, 0}}};
  const auto meg = transitive_reduction(predecessor_adjacency(dag));
  EXPECT_EQ(edge_list(meg), (std::vector<std::pair<NodeIndex, NodeIndex>>{{0, 1}, {0, 2}, {1, 3}, {2, 3}}));
}

TEST(Reduction, RedundantFlagsFollowStorageOrder) {
  Dag dag{.predecessors = {{}, {0}, {0, 1}}};
  EXPECT_EQ(redundant_edges(predecessor_adjacency(dag)), (std::vector<std::uint8_t>{0, 1, 0}));
}

}  // namespace
}  // namespace nimble::scheduler
