// Writing the recorded trace: the engine's tasks plus what the hook layer knows (device, capture
// range, CUPTI durations and coverage), through trace::write_trace.
#pragma once

#include <optional>
#include <string>

#include "nimble/trace/trace.hpp"

namespace nimble::hooks {

struct WindowReport {
  std::string range;         // "cudaProfilerApi", "auto", "nvtx:NAME"
  int iteration = 1;
  std::string ended_by;      // "cuProfilerStop", "period complete", "process exit", ...
  bool truncated = false;    // the window was still open at exit
  trace::json auto_range;    // period detection details, for NIMBLE_CAPTURE_RANGE=auto
  trace::json device;        // describe_device() taken when the window opened
  bool cupti_used = false;
  std::string cupti_status;  // why CUPTI is missing or its data incomplete
  std::string path;          // where the trace goes (empty: trace_output_path())
};

// The current device's name, ordinal, compute capability and driver version (needs the driver).
trace::json describe_device();

// Builds and writes the trace to NIMBLE_OUTPUT; returns it, or nullopt (and says why on stderr)
// when it could not be written.
// `build_ms`, `write_ms` (when given): the time spent assembling the trace and writing it.
std::optional<trace::Trace> write_recorded_trace(const WindowReport& report, double* build_ms = nullptr,
                                                 double* write_ms = nullptr);

// Where the trace goes: NIMBLE_OUTPUT with %p expanded.
std::string trace_output_path();
// The path of `nimble run`'s n-th recording (n >= 1): the trace path for the first, then
// "trace.2.json", "trace.3.json", ...
std::string numbered_trace_path(const std::string& path, int n);

// Folds CUPTI timings into tasks by correlation id and returns the "coverage" object.
trace::json attach_cupti_results(trace::Trace& trace, bool cupti_used);

}  // namespace nimble::hooks
