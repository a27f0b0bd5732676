#include "nimble/scheduler/priorities.hpp"

#include <algorithm>
#include <limits>

namespace nimble::scheduler {

std::vector<int> stream_priorities(const StreamAssignment& a, std::span<const double> slack, double critical_path_us,
                                   int levels) {
  std::vector<double> least(a.streams, std::numeric_limits<double>::infinity());
  for (NodeIndex v = 0; v < a.stream_of.size(); ++v) least[a.stream_of[v]] = std::min(least[a.stream_of[v]], slack[v]);
  std::vector<int> priority(a.streams, 0);
  if (levels <= 1) return priority;
  // Slack within rounding error of the path's length counts as zero.
  const double epsilon = 1e-9 * std::max(1.0, critical_path_us);
  std::vector<std::uint32_t> others;
  for (std::uint32_t s = 0; s < a.streams; ++s) {
    if (least[s] > epsilon) others.push_back(s);
  }
  std::stable_sort(others.begin(), others.end(), [&](auto x, auto y) { return least[x] < least[y]; });
  for (std::size_t rank = 0; rank < others.size(); ++rank) {
    priority[others[rank]] = 1 + static_cast<int>(rank * static_cast<std::size_t>(levels - 1) / others.size());
  }
  return priority;
}

}  // namespace nimble::scheduler
