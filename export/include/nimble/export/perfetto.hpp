// A trace as a Chrome/Perfetto trace-event JSON ("traceEvents" format) with two processes:
//   pid 1, "recorded ...": every task on a lane per program stream (task field `stream`), at its
//     recorded GPU start time `start_us`, or, without one, right after the task issued before it;
//   pid 2, "scheduled plan ...": every task on a lane per schedule stream, at the times
//     scheduler::simulate_schedule gives from the durations, waits drawn as flow arrows.
// Opens in https://ui.perfetto.dev and chrome://tracing. See docs/export.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "nimble/export/plan.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::exporter {

inline constexpr int kRecordedPid = 1;
inline constexpr int kPlanPid = 2;

struct PerfettoOptions {
  PlanOptions plan;                   // which plan the second process shows
  std::size_t max_name_length = 64;   // slice names; the full name is in the slice's args
  std::string source;                 // the input's name, for the metadata ("" = not shown)
};

struct PerfettoExport {
  std::string text;  // the JSON document, one event per line, ending in a newline
  std::size_t tasks = 0;
  std::size_t recorded_lanes = 0;
  std::size_t recorded_with_start = 0;     // tasks placed at their start_us
  std::size_t tasks_without_duration = 0;  // drawn 1 us long (scheduler::kDefaultDurationUs)
  std::size_t recorded_overlaps = 0;       // slices that start before the previous one on their lane ends
  ScheduleView plan;
  std::size_t flows = 0;                   // wait arrows (one per wait)
  double recorded_span_us = 0;             // end of the last recorded slice
  double plan_makespan_us = 0;             // end of the last simulated slice
};

// Deterministic: the same trace and options give the same bytes. The trace should have passed
// validation; otherwise make_plan's std::invalid_argument propagates.
PerfettoExport export_perfetto(const trace::Trace& trace, const PerfettoOptions& options = {});

}  // namespace nimble::exporter
