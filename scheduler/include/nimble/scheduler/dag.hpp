// The graph the scheduler works on, independent of any file format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace nimble::scheduler {

using NodeIndex = std::uint32_t;
inline constexpr NodeIndex kNoNode = std::numeric_limits<NodeIndex>::max();

// Duration assumed for a task whose duration_us is unknown (reported in Stats).
inline constexpr double kDefaultDurationUs = 1.0;

// Nodes 0..N-1 in issue order, which is a topological order: every predecessor of node v has an
// index below v. Duplicated predecessors are allowed and count once.
struct Dag {
  std::vector<std::vector<NodeIndex>> predecessors{};
  // Empty when no duration is known, otherwise one entry per node (nullopt = unknown).
  std::vector<std::optional<double>> durations_us{};

  std::size_t size() const { return predecessors.size(); }
};

// Compressed adjacency: the neighbours of node v are targets[offsets[v] .. offsets[v+1]), ascending.
struct Adjacency {
  std::vector<std::size_t> offsets{0};
  std::vector<NodeIndex> targets;

  std::size_t nodes() const { return offsets.size() - 1; }
  std::size_t edges() const { return targets.size(); }
  std::span<const NodeIndex> operator[](NodeIndex v) const {
    return {targets.data() + offsets[v], targets.data() + offsets[v + 1]};
  }
};

// The predecessors of `dag`, sorted and without duplicates. Throws std::invalid_argument naming the
// node when a predecessor is not below it (not a topological order), or when `durations_us` has the
// wrong length or holds a negative or non-finite value.
Adjacency predecessor_adjacency(const Dag& dag);

// Every edge turned around: predecessors become successors and back.
Adjacency reverse(const Adjacency& adjacency);

// Adjacency from per-node lists (each list is sorted and deduplicated here).
Adjacency make_adjacency(const std::vector<std::vector<NodeIndex>>& lists);

// One duration per node, unknown ones replaced by kDefaultDurationUs; `unknown` gets their count.
std::vector<double> durations_or_default(const Dag& dag, std::size_t* unknown = nullptr);

}  // namespace nimble::scheduler
