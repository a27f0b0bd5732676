// Semantic checks on a typed trace (ids, dependencies, schedule soundness).
// parse_trace() runs them; they are exposed for tools that build traces in memory.
#pragma once

#include "nimble/trace/diagnostics.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace {

// Unique ids; deps name earlier tasks only (no unknown, self or later ids); durations >= 0.
void validate_tasks(const Trace& trace, Diagnostics& out);

// If the trace has a schedule: every task has one, streams are in [0, streams), waits name
// earlier tasks on other streams, every dependency is finished before its task can start
// (through stream order and waits), and the top-level counts match.
void validate_schedule(const Trace& trace, Diagnostics& out);

// Types of the optional fields the recorder writes (name, launch, args, mem, copy, memset,
// dep_reasons, allocations, streams, ...; see docs/trace-format.md). None is required. Fields
// that replay or dependency tools interpret are errors when malformed, descriptive ones warnings.
void validate_recorded_fields(const Trace& trace, Diagnostics& out);

// All of the above, in that order.
Diagnostics validate_trace(const Trace& trace);

}  // namespace nimble::trace
