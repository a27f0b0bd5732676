#include <gtest/gtest.h>

#include <set>

#include "nimble/scheduler/matching.hpp"
#include "oracle.hpp"

namespace nimble::scheduler {
namespace {

void expect_valid(const Matching& m, const std::vector<std::vector<NodeIndex>>& adj) {
  std::size_t matched = 0;
  for (NodeIndex u = 0; u < adj.size(); ++u) {
    const NodeIndex v = m.right_of_left[u];
    if (v == kNoNode) continue;
    ++matched;
    EXPECT_NE(std::find(adj[u].begin(), adj[u].end(), v), adj[u].end()) << "matched a non-edge " << u << "-" << v;
    EXPECT_EQ(m.left_of_right[v], u);
  }
  for (NodeIndex v = 0; v < m.left_of_right.size(); ++v) {
    if (m.left_of_right[v] != kNoNode) { EXPECT_EQ(m.right_of_left[m.left_of_right[v]], v); }
  }
  EXPECT_EQ(matched, m.size);
}

TEST(Matching, HopcroftKarpSizeEqualsAugmentingPathOracle) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 3000 && !HasFailure(); ++i) {
    const std::size_t left = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    const std::size_t right = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
    const double density = std::uniform_real_distribution<double>(0.01, 0.4)(rng);
    std::bernoulli_distribution edge(density);
    std::vector<std::vector<NodeIndex>> adj(left);
    for (auto& row : adj) {
      for (NodeIndex v = 0; v < right; ++v) {
        if (edge(rng)) row.push_back(v);
      }
    }
    SCOPED_TRACE("graph " + std::to_string(i));
    const Matching m = maximum_matching(make_adjacency(adj), right);
    EXPECT_EQ(m.size, testing::kuhn_matching_size(adj, right));
    expect_valid(m, adj);
  }
}

// First fit matches left u to right u, leaving left n-1 (whose only edge goes to right 0) free:
// the one augmenting path runs through all n vertices, which would overflow a recursive DFS.
TEST(Matching, SurvivesAnAugmentingPathThroughAllVertices) {
  const NodeIndex n = 300000;
  std::vector<std::vector<NodeIndex>> adj(n);
  for (NodeIndex u = 0; u + 1 < n; ++u) adj[u] = {u, u + 1};
  adj[n - 1] = {0};
  const Matching m = maximum_matching(make_adjacency(adj), n);
  EXPECT_EQ(m.size, n);
}

TEST(Matching, EmptyGraphMatchesNothing) {
  const Matching m = maximum_matching(make_adjacency(std::vector<std::vector<NodeIndex>>(5)), 3);
  EXPECT_EQ(m.size, 0u);
  EXPECT_EQ(m.right_of_left, std::vector<NodeIndex>(5, kNoNode));
}

}  // namespace
}  // namespace nimble::scheduler
