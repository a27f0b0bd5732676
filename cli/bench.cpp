// nimble bench [-o trace.json] [--iterations N] [--capture-range R] [--iteration K] -- COMMAND...
// Records one iteration like `nimble record`, then (inside the program, right after the
// recorded iteration) replays it N times with every backend and prints the times next to the
// program's own iteration time. The results are written to TRACE.bench.json.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "nimble/replayer/bench_report.hpp"
#include "nimble/trace/io.hpp"
#include "record.hpp"

namespace nimble::cli {
void add_bench_command(CLI::App& app) {
  auto options = std::make_shared<RecordOptions>();
  options->output = settings::defaults::output;
  options->bench_iterations = 200;
  options->dependencies = "memory";  // the concurrency a schedule can use; checked byte for byte
  options->bench_max_streams = settings::defaults::bench_max_streams;
  auto* cmd = app.add_subcommand(
      "bench",
      "Record one iteration, then replay it in the same process with every backend and time it");
  cmd->footer(
      "Example: nimble bench --iteration 10 -- python infer.py\n"
      "Backends: eager-replay (each task launched one by one, no framework), graph-1-stream (one\n"
      "CUDA graph in issue order), graph-nimble-streams (the Nimble schedule's streams and waits),\n"
      "graph-from-edges (graph nodes wired from the reduced dependencies). Each is checked to leave\n"
      "the same bytes as eager replay in the memory the iteration writes (ranges that differ between\n"
      "eager replays themselves, from nondeterministic kernels, are counted and set aside); the\n"
      "program's memory is saved before and restored after, so it continues as if nothing happened.\n"
      "With cudaProfilerApi ranges and --iteration K > 1, the K-1 earlier ranges give the\n"
      "program's own iteration time (wall clock), shown as 'program (eager)'.\n"
      "Results: the trace (-o) and TRACE.bench.json beside it. See docs/replay.md.");
  add_recording_options(*cmd, *options);
  add_dependencies_option(*cmd, *options);
  cmd->add_option("--iterations", options->bench_iterations,
                  "timed replays per backend (default " + std::to_string(options->bench_iterations) + ")")
      ->check(CLI::Range(1, settings::bench_iterations.max));
  cmd->add_option("--max-streams", options->bench_max_streams,
                  "cap the replayed schedule at K streams, merging those that cost the least makespan (default " +
                      std::to_string(*options->bench_max_streams) + "; 0: as many as the concurrency asks)")
      ->check(CLI::Range(0, settings::bench_max_streams.max));
  cmd->callback([options] {
    // The results this run writes, read back below: never an earlier run's file, and never
    // somewhere else because the caller's environment holds a NIMBLE_BENCH_OUTPUT.
    std::error_code ignored;
    std::filesystem::remove(replayer::default_bench_path(options->output), ignored);
    ::unsetenv(settings::bench_output.variable);
    // Each process (each rank of several) replays its own trace and writes results beside it.
    for (const RecordedProcess& p : record_program(*options, "nimble bench")) {
      const int status = p.status;
      const std::string path = replayer::default_bench_path(p.path);
      std::cout << "nimble bench: " << p.path << rank_note(p) << " (program exited with " << status << ")\n"
                << summarize_recording(p.trace);
      const trace::json bench = results_written_with(path, p);
      if (!bench.is_object()) {
        std::cerr << "nimble bench: no results in " << path << ": the program wrote a trace but did not "
                  << "replay it (the recording window was still open at exit, or the program died)\n";
        if (status == 0) exit_code() = kExitBadInput;
        continue;
      }
      std::cout << "bench (" << path << ", " << bench.value("iterations", 0) << " replays each):\n"
                << replayer::bench_table(bench);
      if (bench.contains("error") && status == 0) exit_code() = kExitBadInput;
    }
  });
}

}  // namespace nimble::cli
