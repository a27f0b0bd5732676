// Human-readable summaries shared by `show`, `schedule --stats` and `demo`.
#pragma once

#include <iosfwd>
#include <optional>

#include "nimble/scheduler/schedule.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::cli {

// Tasks by kind, in order of first appearance ("kernel 120, memcpy 4, ...").
void print_task_kinds(std::ostream& out, const trace::Trace& trace);

// Which threads issued the tasks, when more than one did: per thread (numbered in order of first
// appearance, with its Linux thread id), its tasks by kind and the streams they went to. An iteration issued
// from several threads whose calls interleave differently each time is one nimble run cannot find
// or match (docs/replay.md), so `show` says so. Nothing when one thread (or none is recorded).
void print_issuers(std::ostream& out, const trace::Trace& trace);

// Graph and schedule figures: edges, MEG edges, width, streams, waits, critical path, makespans.
void print_plan(std::ostream& out, const scheduler::Stats& stats);

// The makespan of the schedule already stored in a scheduled trace (streams and waits as written),
// simulated with the trace's durations; nullopt when the trace has no schedule.
std::optional<double> simulate_stored_schedule(const trace::Trace& trace);

}  // namespace nimble::cli
