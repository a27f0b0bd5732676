// The multi-stream plan an export shows: the schedule stored in the trace, or one computed for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::exporter {

struct PlanOptions {
  // Used only when the plan is computed here: at most this many streams (0 = as many as needed).
  std::uint32_t max_streams = 0;
  // Compute a plan even when the trace stores one.
  bool reschedule = false;
};

// The schedule as the exporters draw it: each task's lane and the tasks it waits for (not
// replayer::ReplayPlan, which is what replay launches).
struct ScheduleView {
  bool computed = false;        // true: scheduled here (scheduler::schedule_trace on a copy)
  std::string algorithm;        // "nimble", or what the stored schedule says
  std::uint32_t streams = 0;    // lanes: 0 .. streams-1, as numbered in the schedule
  std::vector<std::uint32_t> stream_of;            // per task (index in trace.tasks)
  std::vector<std::vector<std::size_t>> waits;     // per task: indices of the tasks it waits for
  std::vector<std::optional<int>> priorities;      // per stream when the schedule records them
  std::size_t syncs = 0;                           // total waits
  std::uint32_t max_streams = 0;                   // the limit used when computed
  std::string description;  // one line for people: where the plan comes from
};

// The stored schedule when the trace has one (and !options.reschedule), otherwise the schedule
// scheduler::schedule_trace gives a copy of the trace. Stream priorities come from the top-level
// schedule's "stream_priorities" when it is a list of integers, one per stream.
// The trace should have passed validation (trace::validate_trace); otherwise this throws
// std::invalid_argument naming the task and field that make no sense.
ScheduleView make_plan(const trace::Trace& trace, const PlanOptions& options = {});

// "stream 3 (priority 0)" or "stream 3".
std::string plan_lane_name(const ScheduleView& plan, std::uint32_t stream);

}  // namespace nimble::exporter
