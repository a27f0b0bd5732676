// Recording settings, read once from the environment (docs/recording.md lists them).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nimble::hooks {

enum class CaptureRange { ProfilerApi, Auto, Nvtx };

struct Config {
  bool record = false;                     // NIMBLE_MODE=record
  std::string output = "nimble-trace.json";  // NIMBLE_OUTPUT; "%p" becomes the process id
  CaptureRange range = CaptureRange::ProfilerApi;  // NIMBLE_CAPTURE_RANGE
  std::string range_text = "cudaProfilerApi";
  std::string nvtx_name;                   // for nvtx:NAME
  int iteration = 1;                       // NIMBLE_ITERATION: which range / iteration to record
  bool cupti = true;                       // NIMBLE_CUPTI=0 turns durations and coverage off
  bool debug = false;                      // NIMBLE_DEBUG=1: log funnel decisions to stderr
  std::string dependencies = "stream-order";  // NIMBLE_DEPENDENCIES: stream-order or memory
  int bench_iterations = 0;                // NIMBLE_BENCH=N: replay the recorded iteration N times
  std::string bench_output;                // NIMBLE_BENCH_OUTPUT (default: beside the trace)
  // NIMBLE_BENCH_MAX_STREAMS: cap on the replayed schedule's streams; 0 = as many as the DAG's
  // concurrency asks. 8 by default: wide training DAGs (200+ streams uncapped) replay far slower
  // uncapped (docs/replay.md has the measurements).
  int bench_max_streams = 8;
  // NIMBLE_RUN=1 (`nimble run`): after the recorded iteration, later ones that match it are
  // launched as CUDA graphs instead of call by call (docs/replay.md, "nimble run").
  bool run = false;
  // NIMBLE_RUN_PIECE: at most this many ops per launched graph (0: whole segments). Small pieces
  // let the GPU run while the program issues the rest; each graph launch costs host time (16
  // measured best of 8/16/32/64 on the H100, docs/benchmarks/run-h100).
  int run_piece = 16;
  // NIMBLE_RUN_MAX_STREAMS: streams inside the graphs. 1 (default): the program's order, and any
  // argument may change between iterations; more: the schedule's concurrency, but then device
  // addresses must stay as recorded (stale bytes in framework structs often break that).
  int run_max_streams = 1;
  // NIMBLE_RUN_VARIANTS: execs kept per graph, each holding another set of parameters, so
  // programs that alternate between buffers need no node writes (run_executor.hpp).
  int run_variants = 4;
  // NIMBLE_RUN_COMPARE=N: alternate blocks of N replayed iterations and N iterations the program
  // issues itself, timing each, to measure the speedup inside one process (0: off).
  int run_compare = 0;
  // NIMBLE_RUN_SKIP_LIBRARY=0 turns off skipping cuDNN/cuBLAS calls whose inputs and launches
  // are known (library_memo.hpp), and remembering cuBLASLt heuristics.
  bool run_skip_library = true;
  // NIMBLE_RUN_RECORDINGS: recorded iterations kept at once (training step, eval step, last
  // batch...); when full, the one that began an iteration least recently is dropped.
  int run_recordings = 4;
  // NIMBLE_RUN_TRIAL: blocks of this many iterations, replayed and plain in turn, timed in the
  // process before a recording is trusted; it is dropped when replay was not faster (0: no trial).
  int run_trial = 4;
  // NIMBLE_RUN_MIN_SPEEDUP: the trial keeps a recording whose replay is at least this much
  // faster than the program's own iterations (plain / replayed medians). Above 1: two blocks of
  // one program's iterations differ by a few percent, so a replay measured at 1.01x may be slower.
  double run_min_speedup = 1.05;
  // NIMBLE_RUN_STALE: calls run eagerly, with no recorded iteration begun, before nimble run looks
  // for (and records) the iteration the program runs now (at least twice the longest recording).
  int run_stale = 1024;
  std::string run_output;      // NIMBLE_RUN_OUTPUT: the exit summary as JSON (default: TRACE.run.json)
  // NIMBLE_HOST_TIMES=1: count intercepted calls and their host time; print the table at exit.
  bool host_times = false;
  std::vector<std::string> errors;         // problems found; recording stays off if any
};

using GetEnv = std::function<const char*(const char*)>;

Config parse_config(const GetEnv& getenv);
Config config_from_environment();

// Where bench results go: NIMBLE_BENCH_OUTPUT, else the trace path with ".json" replaced by
// ".bench.json".
std::string bench_output_path(const Config& config, const std::string& trace_path);

// Where the `nimble run` summary goes: NIMBLE_RUN_OUTPUT, else the trace path with ".json"
// replaced by ".run.json".
std::string run_output_path(const Config& config, const std::string& trace_path);

// NIMBLE_OUTPUT with "%p" replaced by the process id.
std::string expand_output_path(const std::string& pattern, long pid);

}  // namespace nimble::hooks
