// Writing the recorded trace: the engine's tasks plus what the hook layer knows (device, capture
// range, CUPTI durations and coverage), through trace::write_trace.
#pragma once

#include <optional>
#include <string>

#include "nimble/replayer/run_setup.hpp"
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
  bool cupti_after_first_task = false;  // CUPTI was attached after the window's first task was issued
  std::string path;          // where the trace goes (empty: trace_output_path())
  bool in_background = false;  // written by background_trace_writer() (nimble run): the program goes on
};

// The current device's name, ordinal, compute capability and driver version (needs the driver).
trace::json describe_device();

// Builds and writes the trace to NIMBLE_OUTPUT; returns it, or nullopt (and says why on stderr)
// when it could not be written. In the background, it returns the trace at once, and a failure
// to write it is said on stderr when it happens.
// `waited` (when given): the program's wait to assemble the trace and to write it (in the
// background: to hand a copy to the writer).
std::optional<trace::Trace> write_recorded_trace(const WindowReport& report, replayer::WindowClosing* waited = nullptr);

// Where the trace goes: NIMBLE_OUTPUT with %p expanded.
std::string trace_output_path();
// The path of `nimble run`'s n-th recording (n >= 1): the trace path for the first, then
// "trace.2.json", "trace.3.json", ...
std::string numbered_trace_path(const std::string& path, int n);

// Folds CUPTI timings into tasks by correlation id and returns the "coverage" object.
trace::json attach_cupti_results(trace::Trace& trace, bool cupti_used);

}  // namespace nimble::hooks
