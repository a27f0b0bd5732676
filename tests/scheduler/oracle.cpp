#include "oracle.hpp"

#include <algorithm>
#include <functional>

namespace nimble::scheduler::testing {

Dag random_dag(std::size_t n, double density, std::mt19937_64& rng) {
  std::bernoulli_distribution edge(density), twice(0.05);
  Dag dag;
  dag.predecessors.resize(n);
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex u = 0; u < v; ++u) {
      if (!edge(rng)) continue;
      dag.predecessors[v].push_back(u);
      if (twice(rng)) dag.predecessors[v].push_back(u);
    }
    std::shuffle(dag.predecessors[v].begin(), dag.predecessors[v].end(), rng);
  }
  const int durations = std::uniform_int_distribution<int>(0, 2)(rng);  // none, all, some
  if (durations > 0) {
    std::uniform_int_distribution<int> length(0, 20);
    std::bernoulli_distribution missing(durations == 2 ? 0.3 : 0.0);
    for (std::size_t v = 0; v < n; ++v) {
      if (missing(rng)) dag.durations_us.emplace_back(std::nullopt);
      else dag.durations_us.emplace_back(static_cast<double>(length(rng)));
    }
  }
  return dag;
}

Closure floyd_warshall(const std::vector<std::vector<NodeIndex>>& preds) {
  const std::size_t n = preds.size();
  Closure reach(n, std::vector<char>(n, 0));
  for (std::size_t v = 0; v < n; ++v) {
    for (NodeIndex u : preds[v]) reach[u][v] = 1;
  }
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!reach[i][k]) continue;
      for (std::size_t j = 0; j < n; ++j) reach[i][j] |= reach[k][j];
    }
  }
  return reach;
}

Closure floyd_warshall(const Adjacency& preds) {
  std::vector<std::vector<NodeIndex>> lists(preds.nodes());
  for (NodeIndex v = 0; v < preds.nodes(); ++v) lists[v].assign(preds[v].begin(), preds[v].end());
  return floyd_warshall(lists);
}

std::vector<std::pair<NodeIndex, NodeIndex>> reduction_by_closure(const Dag& dag, const Closure& reach) {
  std::vector<std::pair<NodeIndex, NodeIndex>> edges;
  const std::size_t n = dag.size();
  for (NodeIndex v = 0; v < n; ++v) {
    std::vector<char> seen(n, 0);
    for (NodeIndex u : dag.predecessors[v]) {
      if (seen[u]) continue;
      seen[u] = 1;
      bool implied = false;
      for (std::size_t w = 0; w < n && !implied; ++w) implied = reach[u][w] && reach[w][v];
      if (!implied) edges.emplace_back(u, v);
    }
  }
  std::sort(edges.begin(), edges.end(), [](auto a, auto b) { return std::pair(a.second, a.first) < std::pair(b.second, b.first); });
  return edges;
}

std::size_t kuhn_matching_size(const std::vector<std::vector<NodeIndex>>& adj, std::size_t right_count) {
  std::vector<NodeIndex> left_of(right_count, kNoNode);
  std::size_t size = 0;
  for (NodeIndex root = 0; root < adj.size(); ++root) {
    std::vector<char> visited(right_count, 0);
    std::function<bool(NodeIndex)> augment = [&](NodeIndex u) {
      for (NodeIndex v : adj[u]) {
        if (visited[v]) continue;
        visited[v] = 1;
        if (left_of[v] == kNoNode || augment(left_of[v])) {
          left_of[v] = u;
          return true;
        }
      }
      return false;
    };
    size += augment(root) ? 1 : 0;
  }
  return size;
}

std::vector<std::vector<NodeIndex>> sync_graph(const StreamAssignment& a, const Waits& waits) {
  const auto prev = stream_predecessors(a);
  std::vector<std::vector<NodeIndex>> preds(a.stream_of.size());
  for (NodeIndex v = 0; v < preds.size(); ++v) {
    if (prev[v] != kNoNode) preds[v].push_back(prev[v]);
    preds[v].insert(preds[v].end(), waits[v].begin(), waits[v].end());
  }
  return preds;
}

}  // namespace nimble::scheduler::testing
