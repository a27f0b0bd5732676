// Turns the engine's records into a trace::Trace: tasks with deps, reasons and accesses, and
// the top-level "streams" and "allocations" lists (docs/dependencies.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "allocations.hpp"
#include "dep_set.hpp"
#include "engine.hpp"
#include "stream_order.hpp"

namespace nimble::deps::detail {

// One access as shown in the task's "mem" field.
struct AccessRecord {
  bool everything = false;
  Access mode = Access::ReadWrite;
  std::int64_t alloc = -1;   // -1: outside tracked allocations; `offset` is then the address
  std::uint64_t offset = 0;  // from the allocation's base
  std::uint64_t size = 0;
};

struct TaskRecord {
  std::string kind;
  int stream = -1;  // index in the trace's streams list; -1 for host syncs
  ThreadId thread = 0;
  std::vector<Dep> deps;
  std::vector<AccessRecord> mem;
  trace::json detail;
};

trace::Trace build_trace(const std::vector<TaskRecord>& tasks,
                         const std::vector<StreamInfo*>& streams,
                         const std::vector<AllocRecord>& allocations, StreamOrderPolicy policy);

}  // namespace nimble::deps::detail
