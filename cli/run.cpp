// nimble run [-o trace.json] [--capture-range R] [--iteration K] -- COMMAND...
// Records one iteration like `nimble record`; from then on, inside the program, every later
// iteration whose calls match the recording is launched as CUDA graphs instead of call by call
// (docs/replay.md, "nimble run"). Anything that does not match runs as the program issued it.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "nimble/replayer/bench_report.hpp"
#include "nimble/replayer/run_report.hpp"
#include "nimble/trace/io.hpp"
#include "record.hpp"

namespace nimble::cli {
void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RecordOptions>();
  options->output = settings::defaults::output;
  options->capture_range = "auto";
  options->iteration = 2;
  options->dependencies = "memory";
  options->run = true;
  auto* cmd = app.add_subcommand(
      "run", "Record one iteration, then launch every later matching iteration as CUDA graphs (GPU)");
  // The variables it names come with their defaults from the settings list.
  cmd->footer(
      "Example: nimble run -- python infer.py\n"
      "Each later iteration is checked call by call against the recorded one: the same kernels and\n"
      "launch shapes, in the same order, each on its recorded stream (" +
      settings::assignment(settings::run_multi_stream, "0") + ": one stream only).\n"
      "Matching calls are not run; each stretch\n"
      "between host-visible points is launched as one graph (in pieces of --piece ops) with this\n"
      "iteration's arguments (seeds, counters, moved buffers) and memset values written in.\n"
      "Copies to and from the host run in place, with the program's own host memory. On any\n"
      "mismatch, a synchronisation or an event in the middle of a stretch, the calls held back are\n"
      "issued in their order and the program continues eagerly until the recorded iteration starts\n"
      "again. At exit it prints how many iterations were replayed and why it fell back, and writes\n"
      "TRACE.run.json. Calls of the library functions " + settings::assignment(settings::run_skip_calls) +
      "\nnames, whose inputs were seen to launch the same work, are not made (save those whose\n"
      "work the library orders against another stream with its own events; " +
      settings::assignment(settings::run_skip_library, "0") + "\nturns that off). Memory freed inside the iteration must be stream-ordered (PyTorch's default\n"
      "caching allocator, or backend:cudaMallocAsync); cuMemFree there is refused. --compare N\n"
      "measures the speedup inside this process.\n"
      "Programs it has never seen: with the automatic range it keeps watching after the first\n"
      "recording, records again when the program moves on (TRACE.2.json, ...; up to\n" +
      settings::assignment(settings::run_recordings) +
      " kept), and trusts a recording only after a trial in this process\n"
      "(" + settings::assignment(settings::run_trial) +
      ": blocks of plain and replayed iterations, timed) shows replay is faster;\n"
      "one that does not pay or keeps falling back is dropped, and the program runs as it is.\n"
      "A loop shorter than " + settings::assignment(settings::run_iteration_shortest) +
      " calls is never taken for the iteration: replaying so few saves less than it costs.\n"
      "A program's own CUDA graphs (torch.cuda.graph, reduce-overhead, XLA command buffers) are\n"
      "launched by its own calls, in place, between nimble's graphs; an iteration made of nothing\n"
      "else is left alone. Threads that have launched no kernel (JAX's transfer threads) copy as the\n"
      "program's own calls, neither recorded nor matched (" + settings::assignment(settings::run_side_threads, "0") +
      " looks at every thread).\n"
      "nimble run exits with the program's status (128+N if it died of signal N),\n"
      "whether or not it replayed anything. See docs/replay.md.");
  add_recording_options(*cmd, *options);
  cmd->add_option("--piece", options->run_piece,
                  "launch at most this many ops per graph, so the GPU starts before the program has issued "
                  "the whole stretch (default " + std::string(settings::run_piece.default_text) + "; 0: whole stretches)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--max-streams", options->run_max_streams,
                  "streams the graphs may use (default " + std::string(settings::run_max_streams.default_text) +
                      ": the program's order, any argument may change; more: the schedule's concurrency, device "
                      "addresses must stay as recorded)")
      ->check(CLI::Range(1, settings::run_max_streams.max));
  cmd->add_option("--compare", options->run_compare,
                  "measure the speedup inside this process: alternate blocks of N replayed iterations and N "
                  "iterations the program issues itself, and print both medians (0: off)")
      ->check(CLI::Range(0, 1000000));
  cmd->callback([options] {
    std::error_code ignored;
    std::filesystem::remove(replayer::beside_trace(options->output, "run"), ignored);
    ::unsetenv(settings::run_output.variable);
    // One line per process: the program, or each of its ranks (torchrun, mpirun, srun).
    for (const RecordedProcess& p : record_program(*options, "nimble run")) {
      const int status = p.status;
      const std::string path = replayer::beside_trace(p.path, "run");
      const trace::json summary = results_written_with(path, p);
      if (!summary.is_object()) {
        std::cerr << "nimble run" << rank_note(p) << ": the program was recorded (" << p.path
                  << ") but nothing was replayed: see the \"nimble run:\" lines above for why (exit status " << status
                  << ")\n";
        continue;
      }
      const trace::json why = summary.value(replayer::kNothingReplayedBecause, trace::json());
      std::cout << "nimble run" << rank_note(p) << ": " << summary.value("iterations_replayed", 0)
                << " iteration(s) replayed, " << summary.value("fallbacks", trace::json::array()).size() << " kind(s) of fall-back; trace " << p.path
                << ", summary " << path << " (program exited with " << status << ")\n";
      if (why.is_string()) std::cout << "nimble run" << rank_note(p) << ": nothing was replayed: " << why.get<std::string>() << "\n";
      if (const trace::json ended = summary.value(replayer::kReplayEndedBecause, trace::json()); ended.is_string()) {
        std::cout << "nimble run" << rank_note(p) << ": "
                  << replayer::replay_ended_text(summary.value("iterations_replayed", std::size_t{0}), ended.get<std::string>()) << "\n";
      }
    }
  });
}

}  // namespace nimble::cli
