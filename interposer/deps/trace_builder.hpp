// Turns the engine's records into a trace::Trace: tasks with deps, reasons and accesses, and
// the top-level "streams" and "allocations" lists (docs/dependencies.md).
#pragma once

#include <cstdint>
#include <deque>
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
  std::optional<trace::KernelRecord> kernel;
  trace::json detail;
};

// A window's records, in issue order. A deque: a record, once made, is never moved again (a
// vector's growth copied every record of a large window, on the program's thread).
using TaskRecords = std::deque<TaskRecord>;

trace::Trace build_trace(const TaskRecords& tasks,
                         const std::vector<StreamInfo*>& streams,
                         const std::vector<AllocRecord>& allocations, StreamOrderPolicy policy);
// The same, taking the records (they are left empty).
trace::Trace build_trace(TaskRecords&& tasks, const std::vector<StreamInfo*>& streams,
                         const std::vector<AllocRecord>& allocations, StreamOrderPolicy policy);
// The same with the streams as the trace lists them (streams_json), so that no live stream state
// is read.
trace::Trace build_trace(TaskRecords&& tasks, trace::json streams, const std::vector<AllocRecord>& allocations,
                         StreamOrderPolicy policy);
trace::json streams_json(const std::vector<StreamInfo*>& streams);

}  // namespace nimble::deps::detail
