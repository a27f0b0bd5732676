// Transitive reduction by chunked bit-parallel reachability (docs/scheduler.md, "Reduction").
// Edge u->v is redundant iff u reaches some other predecessor of v, i.e. iff u is in the union of
// the reach sets of v's predecessors. Sources are processed in blocks (block_reach.hpp); blocks
// are independent, so workers take them from a shared counter and write disjoint flags.
#include "nimble/scheduler/reduction.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "block_reach.hpp"

namespace nimble::scheduler {
namespace {

struct FlagRedundant {
  const Adjacency& preds;
  const detail::BlockReach& block;
  std::vector<std::uint8_t>& flags;

  void inner(NodeIndex v, const detail::ReachRow& row) {
    const auto list = preds[v];
    if (list.size() < 2 || row.empty()) return;  // a single incoming edge is never implied
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::int32_t b = block.bit(list[i]);
      if (b >= 0 && row.test(static_cast<std::uint32_t>(b))) flags[preds.offsets[v] + i] = 1;
    }
  }
  void reach(NodeIndex, const detail::ReachRow&) {}
};

}  // namespace

std::vector<std::uint8_t> redundant_edges(const Adjacency& preds, const ReductionOptions& options) {
  const std::size_t n = preds.nodes();
  std::vector<std::uint8_t> flags(preds.edges(), 0);

  // Only edges into nodes with two or more predecessors can be redundant, so only their sources
  // need bits, and a block's pass can stop at the last such target.
  std::vector<NodeIndex> last_target(n, kNoNode);
  for (NodeIndex v = 0; v < n; ++v) {
    const auto list = preds[v];
    if (list.size() < 2) continue;
    for (NodeIndex u : list) last_target[u] = v;  // ascending v: the last write is the largest
  }
  std::vector<NodeIndex> sources;
  for (NodeIndex u = 0; u < n; ++u) {
    if (last_target[u] != kNoNode) sources.push_back(u);
  }
  if (sources.empty()) return flags;

  const std::size_t capacity = detail::block_capacity(n, options.memory_per_thread);
  const std::size_t blocks = (sources.size() + capacity - 1) / capacity;
  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, blocks));

  std::atomic<std::size_t> next_block{0};
  auto work = [&] {
    detail::BlockReach reach(preds);
    FlagRedundant visitor{preds, reach, flags};
    for (std::size_t b; (b = next_block.fetch_add(1)) < blocks;) {
      const std::size_t begin = b * capacity;
      const std::size_t end = std::min(sources.size(), begin + capacity);
      NodeIndex last = 0;
      for (std::size_t i = begin; i < end; ++i) last = std::max(last, last_target[sources[i]]);
      reach.run(std::span(sources).subspan(begin, end - begin), last, visitor);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return flags;
}

Adjacency transitive_reduction(const Adjacency& preds, const ReductionOptions& options) {
  const auto flags = redundant_edges(preds, options);
  Adjacency out;
  out.offsets.reserve(preds.offsets.size());
  out.targets.reserve(preds.edges());
  for (NodeIndex v = 0; v < preds.nodes(); ++v) {
    for (std::size_t e = preds.offsets[v]; e < preds.offsets[v + 1]; ++e) {
      if (!flags[e]) out.targets.push_back(preds.targets[e]);
    }
    out.offsets.push_back(out.targets.size());
  }
  return out;
}

}  // namespace nimble::scheduler
