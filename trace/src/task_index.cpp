#include "task_index.hpp"

#include <unordered_set>

namespace nimble::trace::detail {

TaskIndex::TaskIndex(const Trace& trace) : size_(trace.tasks.size()) {
  for (std::size_t i = 0; i < trace.tasks.size() && identity_; ++i) identity_ = trace.tasks[i].id == static_cast<TaskId>(i);
  if (identity_) return;
  positions_.reserve(trace.tasks.size());
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) positions_.emplace(trace.tasks[i].id, i);
}

std::vector<std::size_t> repeated_positions(const std::vector<TaskId>& ids) {
  constexpr std::size_t kPairwiseLimit = 16;
  std::vector<std::size_t> repeats;
  if (ids.size() <= kPairwiseLimit) {
    for (std::size_t k = 1; k < ids.size(); ++k) {
      for (std::size_t j = 0; j < k; ++j) {
        if (ids[j] == ids[k]) {
          repeats.push_back(k);
          break;
        }
      }
    }
    return repeats;
  }
  std::unordered_set<TaskId> seen;
  seen.reserve(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (!seen.insert(ids[k]).second) repeats.push_back(k);
  }
  return repeats;
}

}  // namespace nimble::trace::detail
