#include "nimble/scheduler/waits.hpp"

#include <algorithm>
#include <cstdint>

#include "nimble/scheduler/reduction.hpp"

namespace nimble::scheduler {
namespace {

// Vector clocks cost O(streams) per wait; beyond about a million clock entries (thousands of
// streams) the reachability pass was measured faster and smaller on network DAGs.
constexpr std::size_t kMaxClockEntries = std::size_t{1} << 20;

// clock[t] = the latest node of stream t known to have finished (or -1): by stream order every
// earlier node of t has finished too. Waits of a node are visited latest first, so a wait implied
// by a later one is seen after that one's clock was merged in; implication is transitive, so the
// kept set never needs a dropped wait.
std::size_t prune_with_vector_clocks(Waits& waits, const StreamAssignment& a) {
  const std::size_t n = a.stream_of.size();
  const std::size_t streams = a.streams;
  std::vector<std::uint32_t> snapshot_of(n, kNoNode);  // clocks kept only for waited-on nodes
  std::uint32_t snapshots = 0;
  for (const auto& list : waits) {
    for (NodeIndex u : list) {
      if (snapshot_of[u] == kNoNode) snapshot_of[u] = snapshots++;
    }
  }
  std::vector<std::int32_t> current(streams * streams, -1);  // clock after each stream's last node
  std::vector<std::int32_t> saved(std::size_t{snapshots} * streams);
  std::size_t removed = 0;
  for (NodeIndex v = 0; v < n; ++v) {
    const std::uint32_t s = a.stream_of[v];
    std::int32_t* clock = current.data() + std::size_t{s} * streams;
    auto& list = waits[v];
    std::size_t kept = list.size();
    for (std::size_t i = list.size(); i-- > 0;) {
      const NodeIndex u = list[i];
      if (clock[a.stream_of[u]] >= static_cast<std::int32_t>(u)) {
        list[i] = kNoNode;
        --kept;
        continue;
      }
      const std::int32_t* other = saved.data() + std::size_t{snapshot_of[u]} * streams;
      for (std::size_t t = 0; t < streams; ++t) clock[t] = std::max(clock[t], other[t]);
    }
    removed += list.size() - kept;
    std::erase(list, kNoNode);
    clock[s] = static_cast<std::int32_t>(v);
    if (snapshot_of[v] != kNoNode) std::copy(clock, clock + streams, saved.data() + std::size_t{snapshot_of[v]} * streams);
  }
  return removed;
}

// The sync graph (stream order + waits) is a DAG; a wait is implied exactly when it is a redundant
// edge of that graph, and removing all redundant edges keeps its reachability.
std::size_t prune_with_reachability(Waits& waits, const StreamAssignment& a, unsigned threads) {
  const auto prev = stream_predecessors(a);
  std::vector<std::vector<NodeIndex>> sync(waits.size());
  for (NodeIndex v = 0; v < waits.size(); ++v) {
    sync[v] = waits[v];
    if (prev[v] != kNoNode) sync[v].push_back(prev[v]);
  }
  const Adjacency graph = make_adjacency(sync);
  const auto flags = redundant_edges(graph, {.threads = threads});
  std::size_t removed = 0;
  for (NodeIndex v = 0; v < waits.size(); ++v) {
    auto& list = waits[v];
    for (std::size_t e = graph.offsets[v]; e < graph.offsets[v + 1]; ++e) {
      const NodeIndex u = graph.targets[e];
      if (flags[e] && u != prev[v]) {
        list.erase(std::find(list.begin(), list.end(), u));
        ++removed;
      }
    }
  }
  return removed;
}

}  // namespace

Waits cross_stream_waits(const Adjacency& meg_preds, const StreamAssignment& assignment) {
  Waits waits(meg_preds.nodes());
  for (NodeIndex v = 0; v < meg_preds.nodes(); ++v) {
    for (NodeIndex u : meg_preds[v]) {
      if (assignment.stream_of[u] != assignment.stream_of[v]) waits[v].push_back(u);
    }
  }
  return waits;
}

std::size_t count_waits(const Waits& waits) {
  std::size_t total = 0;
  for (const auto& list : waits) total += list.size();
  return total;
}

std::size_t prune_implied_waits(Waits& waits, const StreamAssignment& assignment, WaitPruning method,
                                unsigned threads) {
  for (auto& list : waits) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  if (method == WaitPruning::automatic) {
    std::size_t targets = 0;
    std::vector<std::uint8_t> is_target(waits.size(), 0);
    for (const auto& list : waits) {
      for (NodeIndex u : list) targets += is_target[u] ? 0 : (is_target[u] = 1);
    }
    const std::size_t entries = std::size_t{assignment.streams} * (assignment.streams + targets);
    method = entries <= kMaxClockEntries ? WaitPruning::vector_clocks : WaitPruning::reachability;
  }
  return method == WaitPruning::vector_clocks ? prune_with_vector_clocks(waits, assignment)
                                              : prune_with_reachability(waits, assignment, threads);
}

}  // namespace nimble::scheduler
