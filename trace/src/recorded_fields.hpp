// The recorder's optional fields (docs/trace-format.md, "Recorder fields"), checked in two parts:
// top-level lists first (tasks refer to allocations and streams), then each task.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "field_checker.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

// What tasks may refer to, from the valid entries of the top-level lists.
struct RecordedContext {
  bool allocations_listed = false;  // an "allocations" array exists: references must resolve
  std::unordered_map<std::int64_t, std::uint64_t> allocation_size;
  std::unordered_map<std::int64_t, std::uint64_t> allocation_address;
  std::optional<std::unordered_set<std::int64_t>> stream_indexes;  // set when "streams" exists
};

// allocations, streams, device, recorded_with, capture, coverage.
RecordedContext check_recorded_top_level(const json& extra, const FieldChecker& top);

// name, launch, args, mem, copy, memset, dep_reasons, sync fields, ...
void check_recorded_task(const Task& task, const RecordedContext& context, const FieldChecker& checker);

}  // namespace nimble::trace::detail
