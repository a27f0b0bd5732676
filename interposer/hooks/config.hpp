// Recording settings, read once from the environment. Each member below is one setting of
// interposer/settings/settings.def, which holds its variable, default, accepted values and meaning
// (docs/recording.md lists them); parse_config reads them all from that list.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "settings/output_path.hpp"
#include "settings/settings.hpp"

namespace nimble::hooks {

enum class CaptureRange { ProfilerApi, Auto, Nvtx };

namespace defaults = settings::defaults;

struct Config {
  bool record = false;                                  // NIMBLE_MODE=record
  std::string output = defaults::output;                // NIMBLE_OUTPUT; "%p" becomes the process id
  CaptureRange range = CaptureRange::ProfilerApi;       // NIMBLE_CAPTURE_RANGE, as parse_config reads range_text
  std::string range_text = defaults::range_text;
  std::string nvtx_name;                                // for nvtx:NAME
  int iteration = defaults::iteration;                  // NIMBLE_ITERATION
  bool cupti = defaults::cupti;                         // NIMBLE_CUPTI
  bool debug = defaults::debug;                         // NIMBLE_DEBUG
  std::string dependencies = defaults::dependencies;    // NIMBLE_DEPENDENCIES
  int bench_iterations = defaults::bench_iterations;    // NIMBLE_BENCH
  std::string bench_output = defaults::bench_output;    // NIMBLE_BENCH_OUTPUT (bench_output_path)
  int bench_max_streams = defaults::bench_max_streams;  // NIMBLE_BENCH_MAX_STREAMS
  bool run = defaults::run;                             // NIMBLE_RUN (docs/replay.md, "nimble run")
  int run_piece = defaults::run_piece;                  // NIMBLE_RUN_PIECE
  int run_max_streams = defaults::run_max_streams;      // NIMBLE_RUN_MAX_STREAMS
  int run_variants = defaults::run_variants;            // NIMBLE_RUN_VARIANTS
  int run_compare = defaults::run_compare;              // NIMBLE_RUN_COMPARE
  bool run_skip_library = defaults::run_skip_library;   // NIMBLE_RUN_SKIP_LIBRARY
  int run_library_recheck = defaults::run_library_recheck;  // NIMBLE_RUN_LIBRARY_RECHECK
  std::string run_skip_calls = defaults::run_skip_calls;  // NIMBLE_RUN_SKIP_CALLS
  bool run_multi_stream = defaults::run_multi_stream;   // NIMBLE_RUN_MULTI_STREAM
  bool run_side_threads = defaults::run_side_threads;   // NIMBLE_RUN_SIDE_THREADS
  int run_recordings = defaults::run_recordings;        // NIMBLE_RUN_RECORDINGS
  int run_trial = defaults::run_trial;                  // NIMBLE_RUN_TRIAL
  double run_min_speedup = defaults::run_min_speedup;   // NIMBLE_RUN_MIN_SPEEDUP
  int run_trials = defaults::run_trials;                // NIMBLE_RUN_TRIALS
  int run_recheck = defaults::run_recheck;              // NIMBLE_RUN_RECHECK
  int run_stale = defaults::run_stale;                  // NIMBLE_RUN_STALE
  int run_look = defaults::run_look;                    // NIMBLE_RUN_LOOK
  int run_side_exit_looks = defaults::run_side_exit_looks;  // NIMBLE_RUN_SIDE_EXIT_LOOKS
  int run_iteration_shortest = defaults::run_iteration_shortest;  // NIMBLE_RUN_ITERATION_SHORTEST
  int run_side_exit_shortest = defaults::run_side_exit_shortest;  // NIMBLE_RUN_SIDE_EXIT_SHORTEST
  bool run_side_exits = defaults::run_side_exits;            // NIMBLE_RUN_SIDE_EXITS
  bool run_trial_moving = defaults::run_trial_moving;        // NIMBLE_RUN_TRIAL_MOVING
  int run_guard = defaults::run_guard;                  // NIMBLE_RUN_GUARD
  bool run_cupti = defaults::run_cupti;                 // NIMBLE_RUN_CUPTI
  bool run_background = defaults::run_background;       // NIMBLE_RUN_BACKGROUND
  std::string run_output = defaults::run_output;        // NIMBLE_RUN_OUTPUT (run_output_path)
  bool host_times = defaults::host_times;               // NIMBLE_HOST_TIMES
  std::vector<std::string> errors;                      // problems found; recording stays off if any
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

// This process's id and rank, read from the environment at the first call.
const settings::ProcessIdentity& this_process();

// A path setting (NIMBLE_OUTPUT, NIMBLE_RUN_OUTPUT, NIMBLE_BENCH_OUTPUT) for this process: %p,
// %r and the rank suffix of settings/output_path.hpp, or the pid suffix when another process of the
// run claimed the file first (settings/output_claim.hpp; the claim is made here).
std::string this_process_path(const std::string& pattern);

}  // namespace nimble::hooks
