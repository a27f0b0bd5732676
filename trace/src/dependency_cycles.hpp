// Cycle detection for the dependency graph, used to explain a dependency on a later task:
// either the list is merely out of order, or the dependencies form a cycle no order can fix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nimble::trace::detail {

// A graph in compressed form: the successors of node v are targets[offsets[v] .. offsets[v+1]).
struct CompactGraph {
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> targets;
  std::size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
};

// Strongly connected component of each node (Tarjan's algorithm without recursion, so a
// 100,000-task chain cannot overflow the stack). Nodes share an id iff they are on a common cycle.
std::vector<std::uint32_t> strongly_connected_components(const CompactGraph& graph);

// A shortest path from `from` to `to` through nodes of `component` only (both ends included);
// empty if there is none.
std::vector<std::uint32_t> path_within_component(const CompactGraph& graph,
                                                 const std::vector<std::uint32_t>& component_of,
                                                 std::uint32_t from, std::uint32_t to);

}  // namespace nimble::trace::detail
