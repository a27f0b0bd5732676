#include "nimble/scheduler/simulate.hpp"

#include <algorithm>

namespace nimble::scheduler {

Timeline earliest_timeline(const Adjacency& preds, std::span<const double> dur) {
  const std::size_t n = preds.nodes();
  Timeline t{std::vector<double>(n, 0), std::vector<double>(n, 0), 0};
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex p : preds[v]) t.start_us[v] = std::max(t.start_us[v], t.finish_us[p]);
    t.finish_us[v] = t.start_us[v] + dur[v];
    t.makespan_us = std::max(t.makespan_us, t.finish_us[v]);
  }
  return t;
}

Timeline simulate_schedule(const StreamAssignment& a, const Waits& waits, std::span<const double> dur) {
  const std::size_t n = a.stream_of.size();
  Timeline t{std::vector<double>(n, 0), std::vector<double>(n, 0), 0};
  std::vector<double> stream_free(a.streams, 0);
  for (NodeIndex v = 0; v < n; ++v) {
    double start = stream_free[a.stream_of[v]];
    for (NodeIndex u : waits[v]) start = std::max(start, t.finish_us[u]);
    t.start_us[v] = start;
    t.finish_us[v] = start + dur[v];
    stream_free[a.stream_of[v]] = t.finish_us[v];
    t.makespan_us = std::max(t.makespan_us, t.finish_us[v]);
  }
  return t;
}

std::vector<double> slack_us(const Adjacency& preds, std::span<const double> dur, const Timeline& earliest) {
  const std::size_t n = preds.nodes();
  // Latest finish without delaying the end; walked backwards, pushed to predecessors.
  std::vector<double> latest_finish(n, earliest.makespan_us);
  for (NodeIndex v = static_cast<NodeIndex>(n); v-- > 0;) {
    const double latest_start = latest_finish[v] - dur[v];
    for (NodeIndex p : preds[v]) latest_finish[p] = std::min(latest_finish[p], latest_start);
  }
  std::vector<double> slack(n);
  for (NodeIndex v = 0; v < n; ++v) slack[v] = std::max(0.0, latest_finish[v] - earliest.finish_us[v]);
  return slack;
}

}  // namespace nimble::scheduler
