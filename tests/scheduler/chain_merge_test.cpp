#include <gtest/gtest.h>

#include "nimble/scheduler/chain_merge.hpp"
#include "nimble/scheduler/reduction.hpp"
#include "oracle.hpp"

namespace nimble::scheduler {
namespace {

struct Prepared {
  Adjacency meg;
  ChainCover cover;
};

Prepared prepare(const Dag& dag) {
  Adjacency meg = transitive_reduction(predecessor_adjacency(dag));
  ChainCover cover = chains_from_matching(maximum_matching(reverse(meg), dag.size()));
  return {std::move(meg), std::move(cover)};
}

// Fewest streams made of whole chains: chains minus a maximum matching of "tail reaches head".
std::size_t fewest_streams_by_oracle(const ChainCover& cover, const testing::Closure& reach) {
  std::vector<std::vector<NodeIndex>> adj(cover.chains.size());
  for (NodeIndex a = 0; a < cover.chains.size(); ++a) {
    for (NodeIndex b = 0; b < cover.chains.size(); ++b) {
      if (reach[cover.chains[a].back()][cover.chains[b].front()]) adj[a].push_back(b);
    }
  }
  return cover.chains.size() - testing::kuhn_matching_size(adj, cover.chains.size());
}

TEST(ChainMerge, ChainsFollowMatchedEdgesAndCoverEveryTaskOnce) {
  std::mt19937_64 rng(6);
  for (int i = 0; i < 500 && !HasFailure(); ++i) {
    const Dag dag = testing::random_dag(std::uniform_int_distribution<std::size_t>(1, 40)(rng), 0.1, rng);
    const auto [meg, cover] = prepare(dag);
    std::vector<int> seen(dag.size(), 0);
    for (std::uint32_t c = 0; c < cover.chains.size(); ++c) {
      const auto& chain = cover.chains[c];
      if (c > 0) { EXPECT_LT(cover.chains[c - 1].front(), chain.front()); }
      for (std::size_t k = 0; k < chain.size(); ++k) {
        ++seen[chain[k]];
        EXPECT_EQ(cover.chain_of[chain[k]], c);
        if (k > 0) {
          const auto preds = meg[chain[k]];
          EXPECT_TRUE(std::binary_search(preds.begin(), preds.end(), chain[k - 1])) << "not an MEG edge";
        }
      }
    }
    EXPECT_EQ(seen, std::vector<int>(dag.size(), 1));
  }
}

TEST(ChainMerge, UncappedMergingReachesTheFewestStreamsAndCappedStaysValid) {
  std::mt19937_64 rng(7);
  std::size_t capped_heads = 0;
  for (int i = 0; i < 1500 && !HasFailure(); ++i) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 50)(rng);
    const Dag dag = testing::random_dag(n, i % 2 ? 0.05 : 0.15, rng);
    SCOPED_TRACE("dag " + std::to_string(i));
    const auto [meg, cover] = prepare(dag);
    const auto reach = testing::floyd_warshall(dag.predecessors);
    const std::size_t fewest = fewest_streams_by_oracle(cover, reach);
    for (std::size_t candidates : {0, 1, 2}) {
      const ChainMerge merged = merge_chains(meg, cover, {.candidates_per_chain = candidates});
      const auto& a = merged.assignment;
      capped_heads += merged.capped_heads;
      if (candidates == 0) { EXPECT_EQ(a.streams, fewest); }
      EXPECT_GE(a.streams, fewest);
      EXPECT_LE(a.streams, cover.chains.size());
      const auto prev = stream_predecessors(a);
      for (NodeIndex v = 0; v < n; ++v) {
        if (prev[v] != kNoNode) {
          EXPECT_TRUE(reach[prev[v]][v]) << "unordered tasks " << prev[v] << ", " << v << " share a stream";
        }
        EXPECT_EQ(a.stream_of[v], a.stream_of[cover.chains[cover.chain_of[v]].front()]) << "chain split";
      }
    }
  }
  EXPECT_GT(capped_heads, 0u) << "the capped path was never exercised";
}

TEST(ChainMerge, TwoSequentialForksShareStreams) {
  // 0 -> {1, 2} -> 3 -> {4, 5}: chains 0-1-3-4, 2, 5; chain {2} ends before 5 starts.
  const Dag dag{.predecessors = {{}, {0}, {0}, {1, 2}, {3}, {3}}};
  const auto [meg, cover] = prepare(dag);
  ASSERT_EQ(cover.chains.size(), 3u);
  const ChainMerge merged = merge_chains(meg, cover);
  EXPECT_EQ(merged.assignment.streams, 2u);
  EXPECT_EQ(merged.assignment.stream_of[2], merged.assignment.stream_of[5]);
}

}  // namespace
}  // namespace nimble::scheduler
