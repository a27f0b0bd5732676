// Scheduling a nimble trace: the DAG comes from Task::deps, the result goes to Task::schedule and
// Trace::schedule (trace contract in DESIGN.md, details in docs/scheduler.md).
#pragma once

#include "nimble/scheduler/schedule.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::scheduler {

inline constexpr const char* kAlgorithmName = "nimble";

// The DAG of a trace: node i is tasks[i]; predecessors from deps (ids mapped to indices).
// Throws std::invalid_argument naming the task when a dep is unknown, the task itself or later.
Dag dag_from_trace(const trace::Trace& trace);

// Schedules `trace` in place: every task's schedule (stream, waits as task ids in issue order) and the
// top-level schedule (algorithm, streams, syncs = waits; extra: stream_priorities, makespan_us,
// width, ...). A previous schedule is replaced. Throws like dag_from_trace.
Stats schedule_trace(trace::Trace& trace, const Options& options = {});

// Stats as JSON (for `--stats` output and the schedule's extra fields).
trace::json stats_to_json(const Stats& stats);

}  // namespace nimble::scheduler
