// Id -> position in "tasks", shared by the validators.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

class TaskIndex {
 public:
  explicit TaskIndex(const Trace& trace);

  // The first task with this id (duplicates are reported by validate_tasks).
  std::optional<std::size_t> find(TaskId id) const {
    if (identity_) {
      if (id >= 0 && static_cast<std::uint64_t>(id) < size_) return static_cast<std::size_t>(id);
      return std::nullopt;
    }
    const auto it = positions_.find(id);
    if (it == positions_.end()) return std::nullopt;
    return it->second;
  }

 private:
  // Recorded and scheduled traces number tasks 0, 1, 2, ... in order: then the id is the
  // position and no hash lookup (a cache miss each, 300,000 per check) is needed.
  bool identity_ = true;
  std::uint64_t size_ = 0;
  std::unordered_map<TaskId, std::size_t> positions_;
};

// True if `ids[k]` equals an earlier element: pairwise for short lists (deps and waits are
// usually a handful), a hash set for long ones. Returns the positions of the repeats.
std::vector<std::size_t> repeated_positions(const std::vector<TaskId>& ids);

}  // namespace nimble::trace::detail
