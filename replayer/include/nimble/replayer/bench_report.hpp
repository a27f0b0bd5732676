// Results of the framework-free speedup experiment (`nimble bench`) as JSON and as a table, and
// the lower bounds the trace's own durations give. CUDA-free: the CLI prints these too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nimble/replayer/plan.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::replayer {

struct BackendResult {
  std::string backend;
  double median_ms = 0, p10_ms = 0, p90_ms = 0;
  std::size_t graph_nodes = 0;
  std::string verified;   // "same bytes", "N of M ranges differ", "reference", "not checked"
  std::vector<MemoryRange> differing;  // the first ranges that differ from eager replay
  std::string error;      // the backend could not run (the others still do)
};

struct BenchResult {
  std::vector<BackendResult> backends;
  std::uint64_t saved_bytes = 0;          // device memory saved and restored
  std::size_t host_functions_skipped = 0;  // the program's host functions: kept in order, never called
  // Ranges whose bytes differ between eager replays of the same iteration from the same state
  // (atomics, nondeterministic algorithms): not compared, counted here.
  std::size_t nondeterministic_ranges = 0;
  std::size_t checked_ranges = 0;
  std::string error;                      // nothing ran
};

// Durations the trace itself gives: the sum of task durations (one stream's lower bound) and
// the critical path of the dependency graph (any schedule's lower bound), in microseconds.
struct TraceBounds {
  double serial_us = 0, critical_path_us = 0;
  std::size_t tasks_with_duration = 0;
};
TraceBounds trace_bounds(const trace::Trace& trace);

// The results as JSON (written beside the trace) and as the table `nimble bench` prints.
// `framework_ms` is the program's own iteration time when it was measured.
trace::json bench_to_json(const BenchResult& result, const TraceBounds& bounds,
                          std::optional<double> framework_ms, const trace::json& schedule_summary);
std::string bench_table(const trace::json& bench);

// Where bench results go by default: the trace path with ".json" replaced by ".bench.json".
std::string default_bench_path(const std::string& trace_path);
// TRACE.json -> TRACE.WHAT.json (else TRACE.WHAT.json appended): files written beside a trace.
std::string beside_trace(const std::string& trace_path, const std::string& what);

}  // namespace nimble::replayer
