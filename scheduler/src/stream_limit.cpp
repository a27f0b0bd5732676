#include "nimble/scheduler/stream_limit.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "nimble/scheduler/simulate.hpp"
#include "nimble/scheduler/waits.hpp"

namespace nimble::scheduler {
namespace {

// Time covered by a set of streams: disjoint intervals, start -> end.
class Coverage {
 public:
  double overlap(double a, double b) const {
    auto it = spans_.upper_bound(a);
    if (it != spans_.begin()) --it;
    double total = 0;
    for (; it != spans_.end() && it->first < b; ++it) total += std::max(0.0, std::min(b, it->second) - std::max(a, it->first));
    return total;
  }
  void add(double a, double b) {
    auto it = spans_.upper_bound(a);
    if (it != spans_.begin() && std::prev(it)->second >= a) {
      it = std::prev(it);
      a = it->first;
      b = std::max(b, it->second);
      it = spans_.erase(it);
    }
    while (it != spans_.end() && it->first <= b) {
      b = std::max(b, it->second);
      it = spans_.erase(it);
    }
    spans_.emplace(a, b);
  }

 private:
  std::map<double, double> spans_;
};

struct StreamProfile {
  std::vector<std::pair<double, double>> busy;  // when its tasks run in the simulation
  double busy_us = 0;
  bool critical = false;
};

}  // namespace

void limit_streams(StreamAssignment& a, std::uint32_t max_streams, const Adjacency& meg_preds,
                   std::span<const double> dur, std::span<const double> slack) {
  if (max_streams == 0 || a.streams <= max_streams) return;
  const Timeline timeline = simulate_schedule(a, cross_stream_waits(meg_preds, a), dur);
  const double epsilon = 1e-9 * std::max(1.0, timeline.makespan_us);

  std::vector<StreamProfile> profile(a.streams);
  for (NodeIndex v = 0; v < a.stream_of.size(); ++v) {
    auto& p = profile[a.stream_of[v]];
    p.critical |= slack[v] <= epsilon;
    if (dur[v] <= 0) continue;
    p.busy_us += dur[v];
    const double start = timeline.start_us[v], finish = timeline.finish_us[v];
    if (!p.busy.empty() && p.busy.back().second >= start) {
      p.busy.back().second = finish;  // back to back on the stream: one interval
    } else {
      p.busy.emplace_back(start, finish);
    }
  }

  std::vector<std::uint32_t> order(a.streams);
  for (std::uint32_t s = 0; s < a.streams; ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](auto x, auto y) {
    return std::tuple(!profile[x].critical, -profile[x].busy_us) < std::tuple(!profile[y].critical, -profile[y].busy_us);
  });

  std::vector<std::uint32_t> bin_of(a.streams);
  std::vector<Coverage> bins(max_streams);
  std::vector<double> bin_busy(max_streams, 0);
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const auto& p = profile[order[rank]];
    std::uint32_t best = static_cast<std::uint32_t>(rank);
    if (rank >= max_streams) {
      double best_overlap = 0;
      for (std::uint32_t b = 0; b < max_streams; ++b) {
        double overlap = 0;
        for (const auto& [start, finish] : p.busy) overlap += bins[b].overlap(start, finish);
        if (b == 0 || std::tie(overlap, bin_busy[b]) < std::tie(best_overlap, bin_busy[best])) {
          best = b;
          best_overlap = overlap;
        }
      }
    }
    bin_of[order[rank]] = best;
    for (const auto& [start, finish] : p.busy) bins[best].add(start, finish);
    bin_busy[best] += p.busy_us;
  }
  for (auto& s : a.stream_of) s = bin_of[s];
  renumber_streams(a);
}

}  // namespace nimble::scheduler
