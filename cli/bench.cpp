// nimble bench [-o trace.json] [--iterations N] [--capture-range R] [--iteration K] -- COMMAND...
// Records one iteration like `nimble record`, then (inside the program, right after the
// recorded iteration) replays it N times with every backend and prints the times next to the
// program's own iteration time. The results are written to TRACE.bench.json.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.hpp"
#include "nimble/replayer/bench_report.hpp"
#include "nimble/trace/io.hpp"
#include "record.hpp"

namespace nimble::cli {
void add_bench_command(CLI::App& app) {
  auto options = std::make_shared<RecordOptions>();
  options->output = "nimble-trace.json";
  options->bench_iterations = 200;
  options->dependencies = "memory";  // the concurrency a schedule can use; checked byte for byte
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
  cmd->add_option("-o,--output", options->output, "trace file to write (default nimble-trace.json)");
  cmd->add_option("--iterations", options->bench_iterations, "timed replays per backend (default 200)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--capture-range", options->capture_range, "cudaProfilerApi (default), auto, or nvtx:NAME")
      ->check([](const std::string& value) { return check_capture_range(value); });
  cmd->add_option("--iteration", options->iteration,
                  "which range (cudaProfilerApi, nvtx) or which detected iteration (auto) to record")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dependencies", options->dependencies,
                  "memory (default: tasks of one stream ordered by memory conflicts, events and syncs) "
                  "or stream-order (the program's stream order)")
      ->check([](const std::string& value) { return check_dependencies(value); });
  options->bench_max_streams = 8;
  cmd->add_option("--max-streams", options->bench_max_streams,
                  "cap the replayed schedule at K streams, merging those that cost the least makespan "
                  "(default 8; 0: as many as the concurrency asks)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("COMMAND", options->command, "the program and its arguments, after --")->required();
  cmd->callback([options] {
    // The results this run writes, read back below: never an earlier run's file, and never
    // somewhere else because the caller's environment holds a NIMBLE_BENCH_OUTPUT.
    const std::string path = replayer::default_bench_path(options->output);
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    ::unsetenv("NIMBLE_BENCH_OUTPUT");
    auto trace = record_program(*options, "nimble bench");
    if (!trace) return;
    const int status = exit_code();
    std::cout << "nimble bench: " << options->output << " (program exited with " << status << ")\n"
              << summarize_recording(*trace);
    std::ifstream in(path);
    trace::json bench = trace::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!in || bench.is_discarded() || !bench.is_object()) {
      std::cerr << "nimble bench: no results in " << path << ": the program wrote a trace but did not "
                << "replay it (the recording window was still open at exit, or the program died)\n";
      if (status == 0) exit_code() = kExitBadInput;
      return;
    }
    std::cout << "bench (" << path << ", " << bench.value("iterations", 0) << " replays each):\n"
              << replayer::bench_table(bench);
    if (bench.contains("error") && status == 0) exit_code() = kExitBadInput;
  });
}

}  // namespace nimble::cli
