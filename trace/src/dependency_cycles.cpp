#include "dependency_cycles.hpp"

#include <algorithm>
#include <limits>
#include <queue>

namespace nimble::trace::detail {

std::vector<std::uint32_t> strongly_connected_components(const CompactGraph& graph) {
  constexpr std::uint32_t kUnvisited = std::numeric_limits<std::uint32_t>::max();
  const std::size_t n = graph.size();
  std::vector<std::uint32_t> order(n, kUnvisited), low(n, 0), component(n, kUnvisited);
  std::vector<bool> on_stack(n, false);
  std::vector<std::uint32_t> stack;
  struct Frame { std::uint32_t node; std::uint32_t next_edge; };
  std::vector<Frame> calls;
  std::uint32_t counter = 0, components = 0;

  for (std::uint32_t root = 0; root < n; ++root) {
    if (order[root] != kUnvisited) continue;
    const auto visit = [&](std::uint32_t v) {
      order[v] = low[v] = counter++;
      stack.push_back(v);
      on_stack[v] = true;
      calls.push_back({v, graph.offsets[v]});
    };
    visit(root);
    while (!calls.empty()) {
      Frame& frame = calls.back();
      const std::uint32_t v = frame.node;
      if (frame.next_edge < graph.offsets[v + 1]) {
        const std::uint32_t w = graph.targets[frame.next_edge++];
        if (order[w] == kUnvisited) {
          visit(w);  // invalidates `frame`
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], order[w]);
        }
        continue;
      }
      if (low[v] == order[v]) {
        std::uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component[w] = components;
        } while (w != v);
        ++components;
      }
      calls.pop_back();
      if (!calls.empty()) low[calls.back().node] = std::min(low[calls.back().node], low[v]);
    }
  }
  return component;
}

std::vector<std::uint32_t> path_within_component(const CompactGraph& graph,
                                                 const std::vector<std::uint32_t>& component_of,
                                                 std::uint32_t from, std::uint32_t to) {
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> parent(graph.size(), kNone);
  std::queue<std::uint32_t> queue;
  parent[from] = from;
  queue.push(from);
  while (!queue.empty() && parent[to] == kNone) {
    const std::uint32_t v = queue.front();
    queue.pop();
    for (std::uint32_t e = graph.offsets[v]; e < graph.offsets[v + 1]; ++e) {
      const std::uint32_t w = graph.targets[e];
      if (parent[w] != kNone || component_of[w] != component_of[from]) continue;
      parent[w] = v;
      queue.push(w);
    }
  }
  if (parent[to] == kNone) return {};
  std::vector<std::uint32_t> path{to};
  while (path.back() != from) path.push_back(parent[path.back()]);
  std::reverse(path.begin(), path.end());
  return path;
}

}  // namespace nimble::trace::detail
