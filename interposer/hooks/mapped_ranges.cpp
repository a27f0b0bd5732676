#include "mapped_ranges.hpp"

#include <algorithm>

namespace nimble::hooks {

std::vector<MappedRanges::Change> MappedRanges::map(std::uint64_t addr, std::uint64_t size) {
  std::vector<Change> changes;
  if (size == 0) return changes;
  std::uint64_t start = addr, end = addr + size;
  // Absorb every run that overlaps or touches [start, end).
  auto it = runs_.upper_bound(start);
  if (it != runs_.begin() && std::prev(it)->second >= start) --it;
  while (it != runs_.end() && it->first <= end) {
    changes.push_back({false, it->first, it->second - it->first});
    start = std::min(start, it->first);
    end = std::max(end, it->second);
    it = runs_.erase(it);
  }
  runs_[start] = end;
  changes.push_back({true, start, end - start});
  return changes;
}

std::vector<MappedRanges::Change> MappedRanges::unmap(std::uint64_t addr, std::uint64_t size) {
  std::vector<Change> changes;
  if (size == 0) return changes;
  const std::uint64_t start = addr, end = addr + size;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keep;
  auto it = runs_.upper_bound(start);
  if (it != runs_.begin() && std::prev(it)->second > start) --it;
  while (it != runs_.end() && it->first < end) {
    changes.push_back({false, it->first, it->second - it->first});
    if (it->first < start) keep.emplace_back(it->first, start);
    if (it->second > end) keep.emplace_back(end, it->second);
    it = runs_.erase(it);
  }
  for (const auto& [s, e] : keep) {
    runs_[s] = e;
    changes.push_back({true, s, e - s});
  }
  return changes;
}

}  // namespace nimble::hooks
