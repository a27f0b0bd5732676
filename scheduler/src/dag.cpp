#include "nimble/scheduler/dag.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace nimble::scheduler {

Adjacency make_adjacency(const std::vector<std::vector<NodeIndex>>& lists) {
  Adjacency out;
  out.offsets.reserve(lists.size() + 1);
  std::size_t total = 0;
  for (const auto& list : lists) total += list.size();
  out.targets.reserve(total);
  for (const auto& list : lists) {
    const auto begin = out.targets.size();
    out.targets.insert(out.targets.end(), list.begin(), list.end());
    const auto first = out.targets.begin() + static_cast<std::ptrdiff_t>(begin);
    std::sort(first, out.targets.end());
    out.targets.erase(std::unique(first, out.targets.end()), out.targets.end());
    out.offsets.push_back(out.targets.size());
  }
  return out;
}

Adjacency predecessor_adjacency(const Dag& dag) {
  const std::size_t n = dag.size();
  if (n >= kNoNode) throw std::invalid_argument("too many tasks for the scheduler");
  for (std::size_t v = 0; v < n; ++v) {
    for (NodeIndex p : dag.predecessors[v]) {
      if (p >= v) {
        throw std::invalid_argument("node " + std::to_string(v) + ": predecessor " + std::to_string(p) +
                                    " is not an earlier node (issue order must be topological)");
      }
    }
  }
  if (!dag.durations_us.empty() && dag.durations_us.size() != n) {
    throw std::invalid_argument("durations_us has " + std::to_string(dag.durations_us.size()) +
                                " entries for " + std::to_string(n) + " nodes");
  }
  for (std::size_t v = 0; v < dag.durations_us.size(); ++v) {
    const auto& d = dag.durations_us[v];
    if (d && (!std::isfinite(*d) || *d < 0)) {
      throw std::invalid_argument("node " + std::to_string(v) + ": duration_us must be finite and >= 0");
    }
  }
  return make_adjacency(dag.predecessors);
}

Adjacency reverse(const Adjacency& adjacency) {
  const std::size_t n = adjacency.nodes();
  Adjacency out;
  out.offsets.assign(n + 1, 0);
  for (NodeIndex t : adjacency.targets) ++out.offsets[t + 1];
  for (std::size_t v = 0; v < n; ++v) out.offsets[v + 1] += out.offsets[v];
  out.targets.resize(adjacency.edges());
  std::vector<std::size_t> fill(out.offsets.begin(), out.offsets.end() - 1);
  // Visiting sources in ascending order keeps every reversed row sorted.
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex t : adjacency[v]) out.targets[fill[t]++] = v;
  }
  return out;
}

std::vector<double> durations_or_default(const Dag& dag, std::size_t* unknown) {
  std::vector<double> out(dag.size(), kDefaultDurationUs);
  std::size_t missing = dag.durations_us.empty() ? dag.size() : 0;
  for (std::size_t v = 0; v < dag.durations_us.size() && v < out.size(); ++v) {
    if (dag.durations_us[v]) {
      out[v] = *dag.durations_us[v];
    } else {
      ++missing;
    }
  }
  if (unknown) *unknown = missing;
  return out;
}

}  // namespace nimble::scheduler
