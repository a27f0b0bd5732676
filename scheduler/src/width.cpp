#include "nimble/scheduler/width.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace nimble::scheduler {
namespace {

std::size_t largest_level(const std::vector<std::uint32_t>& level_of) {
  std::vector<std::size_t> size;
  for (std::uint32_t level : level_of) {
    if (level >= size.size()) size.resize(level + 1, 0);
    ++size[level];
  }
  return size.empty() ? 0 : *std::max_element(size.begin(), size.end());
}

}  // namespace

std::size_t max_concurrency(const Timeline& t) {
  std::vector<std::pair<double, int>> events;  // (time, +1 start / -1 finish)
  for (std::size_t v = 0; v < t.start_us.size(); ++v) {
    if (t.finish_us[v] <= t.start_us[v]) continue;
    events.emplace_back(t.start_us[v], +1);
    events.emplace_back(t.finish_us[v], -1);
  }
  std::sort(events.begin(), events.end());  // at equal times finishes (-1) come first
  long running = 0, most = 0;
  for (const auto& [time, delta] : events) {
    running += delta;
    most = std::max(most, running);
  }
  return static_cast<std::size_t>(most);
}

std::size_t width_lower_bound(const Adjacency& preds, const Timeline& earliest) {
  const std::size_t n = preds.nodes();
  std::vector<std::uint32_t> depth(n, 0), height(n, 0);
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex p : preds[v]) depth[v] = std::max(depth[v], depth[p] + 1);
  }
  for (NodeIndex v = static_cast<NodeIndex>(n); v-- > 0;) {
    for (NodeIndex p : preds[v]) height[p] = std::max(height[p], height[v] + 1);
  }
  return std::max({largest_level(depth), largest_level(height), max_concurrency(earliest)});
}

}  // namespace nimble::scheduler
