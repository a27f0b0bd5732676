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

struct TaskRecord {
  trace::TaskKind kind = trace::TaskKind::Kernel;
  int stream = -1;  // index in the trace's streams list; -1 for host syncs
  ThreadId thread = 0;
  std::vector<Dep> deps;
  std::vector<trace::MemoryAccess> mem;  // as the trace shows them
  trace::json detail;
};

trace::Trace build_trace(const std::vector<TaskRecord>& tasks,
                         const std::vector<StreamInfo*>& streams,
                         const std::vector<AllocRecord>& allocations, StreamOrderPolicy policy);
// The same, taking the records (they are left empty).
trace::Trace build_trace(std::vector<TaskRecord>&& tasks, const std::vector<StreamInfo*>& streams,
                         const std::vector<AllocRecord>& allocations, StreamOrderPolicy policy);

}  // namespace nimble::deps::detail
