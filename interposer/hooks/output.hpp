// Writing the recorded trace: the engine's tasks plus what the hook layer knows (device, capture
// range, CUPTI durations and coverage), through trace::write_trace.
#pragma once

#include <optional>
#include <string>

#include "nimble/trace/trace.hpp"
#include "trace_writer.hpp"

namespace nimble::hooks {

struct WindowReport {
  std::string range;         // "cudaProfilerApi", "auto", "nvtx:NAME"
  int iteration = 1;
  std::string ended_by;      // "cuProfilerStop", "period complete", "process exit", ...
  bool truncated = false;    // the window was still open at exit
  trace::json auto_range;    // period detection details, for NIMBLE_CAPTURE_RANGE=auto
  trace::json side_exit;     // nimble run: the window recorded the stretch after a side exit (RecordingWindow)
  trace::json device;        // describe_device() taken when the window opened
  bool cupti_used = false;
  std::string cupti_status;  // why CUPTI is missing or its data incomplete
  bool cupti_after_first_task = false;  // CUPTI was attached after the window's first task was issued
  std::string path;          // where the trace goes (empty: trace_output_path())
  double window_ms = 0;      // from its opening to its close: the iteration as recorded
};

// The current device's name, ordinal, compute capability and driver version (needs the driver).
trace::json describe_device();

// The trace of the window that closed: the engine's tasks (taken from it) and what the hook layer
// knows (device, capture range, CUPTI durations and coverage).
trace::Trace build_recorded_trace(const WindowReport& report);
// The same in two steps: the engine's tasks are taken now; the function returned builds the trace,
// on any thread, once. Only without CUPTI (report.cupti_used false): its results are read when
// the trace is built.
TraceWriter::Build build_recorded_trace_later(const WindowReport& report);
// Writes it to report.path (or NIMBLE_OUTPUT) and says so on stderr; false (and why on stderr)
// when it could not be written.
bool write_recorded_trace(const trace::Trace& trace, const WindowReport& report);
// The same on background_trace_writer()'s thread (nimble run: the program goes on meanwhile), after
// `before` there; a failure is said on stderr when it happens.
void write_recorded_trace_in_background(trace::Trace trace, const WindowReport& report,
                                        TraceWriter::Before before = {});
// The same for a trace built on that thread first (build_recorded_trace_later).
void write_recorded_trace_in_background(TraceWriter::Build build, const WindowReport& report,
                                        TraceWriter::Before before = {});

// Where the trace goes: NIMBLE_OUTPUT with %p expanded.
std::string trace_output_path();
// The path of `nimble run`'s n-th recording (n >= 1): the trace path for the first, then
// "trace.2.json", "trace.3.json", ...
std::string numbered_trace_path(const std::string& path, int n);

// Folds CUPTI timings into tasks by correlation id and returns the "coverage" object.
trace::json attach_cupti_results(trace::Trace& trace, bool cupti_used);

}  // namespace nimble::hooks
