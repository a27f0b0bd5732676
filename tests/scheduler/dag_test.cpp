#include <gtest/gtest.h>

#include <cmath>

#include "nimble/scheduler/dag.hpp"
#include "nimble/scheduler/synthetic.hpp"

namespace nimble::scheduler {
namespace {

std::string error_of(const Dag& dag) {
  try {
    predecessor_adjacency(dag);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Dag, AdjacencySortsAndDeduplicates) {
  const Adjacency a = predecessor_adjacency({.predecessors = {{}, {0, 0}, {1, 0, 1}}});
  EXPECT_EQ(a.edges(), 3u);
  EXPECT_EQ(std::vector<NodeIndex>(a[2].begin(), a[2].end()), (std::vector<NodeIndex>{0, 1}));
  const Adjacency r = reverse(a);
  EXPECT_EQ(std::vector<NodeIndex>(r[0].begin(), r[0].end()), (std::vector<NodeIndex>{1, 2}));
}

TEST(Dag, RejectsBadInputNamingTheNode) {
  EXPECT_EQ(error_of({.predecessors = {{}, {1}}}),
            "node 1: predecessor 1 is not an earlier node (issue order must be topological)");
  EXPECT_EQ(error_of({.predecessors = {{}, {}}, .durations_us = {1.0}}), "durations_us has 1 entries for 2 nodes");
  EXPECT_EQ(error_of({.predecessors = {{}, {}}, .durations_us = {1.0, -2.0}}), "node 1: duration_us must be finite and >= 0");
  EXPECT_EQ(error_of({.predecessors = {{}}, .durations_us = {NAN}}), "node 0: duration_us must be finite and >= 0");
}

TEST(Synthetic, NetworkDagHasTheExactSizeAndIsDeterministic) {
  for (std::size_t n : {1, 2, 7, 100, 1000, 12345}) {
    const Dag dag = make_network_dag(n, 3);
    EXPECT_EQ(dag.size(), n);
    EXPECT_EQ(dag.durations_us.size(), n);
    EXPECT_NO_THROW(predecessor_adjacency(dag));
  }
  const Dag a = make_network_dag(5000, 11), b = make_network_dag(5000, 11), c = make_network_dag(5000, 12);
  EXPECT_EQ(a.predecessors, b.predecessors);
  EXPECT_EQ(a.durations_us, b.durations_us);
  EXPECT_NE(a.predecessors, c.predecessors);
}

TEST(Synthetic, UniformRandomDagIsTopologicalAndDeterministic) {
  const Dag a = make_uniform_random_dag(3000, 5, 4), b = make_uniform_random_dag(3000, 5, 4);
  EXPECT_EQ(a.predecessors, b.predecessors);
  EXPECT_EQ(a.size(), 3000u);
  EXPECT_EQ(a.predecessors[1], (std::vector<NodeIndex>(5, 0)));
  EXPECT_NO_THROW(predecessor_adjacency(a));
}

TEST(Synthetic, NetworkDagHasBranchesAndFarReachingBackwardEdges) {
  const Dag dag = make_network_dag(10000, 1);
  std::size_t joins = 0, far = 0;
  for (NodeIndex v = 0; v < dag.size(); ++v) {
    joins += dag.predecessors[v].size() >= 2;
    for (NodeIndex u : dag.predecessors[v]) far += v - u > 2000;
  }
  EXPECT_GT(joins, dag.size() / 10);
  EXPECT_GT(far, dag.size() / 10);
}

}  // namespace
}  // namespace nimble::scheduler
