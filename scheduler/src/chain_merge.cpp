// Chain merging (docs/scheduler.md, "Merging chains"). The chain graph has an edge A -> B when
// tail(A) reaches head(B); since reachability is transitive, a path cover of it is a set of streams
// whose tasks are totally ordered, and a maximum matching gives a minimum path cover. The graph can
// be dense (thousands of chains), so it is never built whole: one bit-parallel pass per block of
// tails (latest tails first) finds, for each head, the tails reaching it, keeping the latest few.
#include "nimble/scheduler/chain_merge.hpp"

#include <algorithm>

#include "block_reach.hpp"
#include "nimble/scheduler/matching.hpp"

namespace nimble::scheduler {
namespace {

struct CollectCandidates {
  const std::vector<std::uint32_t>& chain_of_head;  // chain whose head is the node, or kNoNode
  const std::vector<std::uint32_t>& chain_of_tail_bit;  // chain of each source bit in the block
  std::vector<std::vector<std::uint32_t>>& candidates;  // per chain, preceding chains
  std::size_t cap;
  std::vector<std::uint8_t>& truncated;  // per chain: more tails reach its head than were kept

  void inner(NodeIndex, const detail::ReachRow&) {}
  void reach(NodeIndex v, const detail::ReachRow& row) {
    const std::uint32_t b = chain_of_head[v];
    if (b == kNoNode || row.empty()) return;
    auto& list = candidates[b];
    row.for_each_descending(static_cast<std::uint32_t>(chain_of_tail_bit.size()), [&](std::uint32_t bit) {
      if (cap != 0 && list.size() >= cap) {
        truncated[b] = 1;
        return false;
      }
      list.push_back(chain_of_tail_bit[bit]);
      return true;
    });
  }
};

}  // namespace

ChainMerge merge_chains(const Adjacency& meg_preds, const ChainCover& cover, const ChainMergeOptions& options) {
  const std::size_t n = meg_preds.nodes();
  const std::size_t chains = cover.chains.size();
  ChainMerge out;

  std::vector<std::uint32_t> chain_of_head(n, kNoNode);
  std::vector<std::pair<NodeIndex, std::uint32_t>> tails;  // (tail node, chain), ascending
  NodeIndex last_head = 0;
  for (std::uint32_t c = 0; c < chains; ++c) {
    chain_of_head[cover.chains[c].front()] = c;
    last_head = std::max(last_head, cover.chains[c].front());
    tails.emplace_back(cover.chains[c].back(), c);
  }
  std::sort(tails.begin(), tails.end());

  // Blocks of tails from the latest down, so each head's candidates are the latest-ending chains:
  // the tightest fits, which leave the fewest idle gaps on the merged stream.
  std::vector<std::vector<std::uint32_t>> candidates(chains);
  std::vector<std::uint8_t> truncated(chains, 0);
  const std::size_t capacity = detail::block_capacity(n, options.memory_per_pass);
  detail::BlockReach reach(meg_preds);
  std::vector<NodeIndex> sources;
  std::vector<std::uint32_t> chain_of_bit;
  for (std::size_t end = tails.size(); end > 0;) {
    const std::size_t begin = end > capacity ? end - capacity : 0;
    sources.clear();
    chain_of_bit.clear();
    for (std::size_t i = begin; i < end; ++i) {
      sources.push_back(tails[i].first);
      chain_of_bit.push_back(tails[i].second);
    }
    end = begin;
    if (sources.front() >= last_head) continue;  // no head after these tails
    CollectCandidates visitor{chain_of_head, chain_of_bit, candidates, options.candidates_per_chain, truncated};
    reach.run(sources, last_head, visitor);
  }
  out.capped_heads = static_cast<std::size_t>(std::count(truncated.begin(), truncated.end(), 1));

  // Matching on the chain graph: left = chain as predecessor, right = chain as successor.
  std::vector<std::vector<NodeIndex>> successors(chains);
  for (std::uint32_t b = 0; b < chains; ++b) {
    for (std::uint32_t a : candidates[b]) successors[a].push_back(b);
    out.candidate_pairs += candidates[b].size();
  }
  const Matching m = maximum_matching(make_adjacency(successors), chains);

  out.assignment.stream_of.assign(n, 0);
  std::uint32_t stream = 0;
  for (std::uint32_t start = 0; start < chains; ++start) {  // chains are sorted by head
    if (m.left_of_right[start] != kNoNode) continue;
    for (NodeIndex c = start; c != kNoNode; c = m.right_of_left[c]) {
      for (NodeIndex v : cover.chains[c]) out.assignment.stream_of[v] = stream;
    }
    ++stream;
  }
  out.assignment.streams = stream;
  renumber_streams(out.assignment);
  return out;
}

}  // namespace nimble::scheduler
