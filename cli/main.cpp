// nimble: record, schedule and replay the GPU work of unmodified CUDA programs.
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "nimble: record the GPU tasks of an unmodified CUDA program, schedule them onto\n"
      "concurrent streams (the Nimble algorithm) and replay them.\n"
      "Run `nimble demo` to see a schedule of a bundled trace, or `nimble SUBCOMMAND --help`.",
      "nimble"};
  app.set_version_flag("--version", std::string("nimble ") + NIMBLE_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  nimble demo                                    schedule the bundled sample trace\n"
      "  nimble check trace.json                        list every problem in a trace\n"
      "  nimble show trace.json                         tasks, edges, width, makespans\n"
      "  nimble schedule trace.json -o scheduled.json   assign streams and waits\n"
      "  nimble export --format perfetto trace.json -o timeline.json   timeline for ui.perfetto.dev\n"
      "  nimble record -o trace.json -- python train.py  record one iteration (GPU)\n"
      "  nimble bench --iteration 10 -- python infer.py  record, then replay it with every backend (GPU)\n"
      "  nimble run -- python infer.py                  replay later iterations as CUDA graphs (GPU)\n"
      "  nimble settings                                the NIMBLE_* variables, defaults and meaning\n"
      "The trace format is described in docs/trace-format.md.");

  nimble::cli::add_check_command(app);
  nimble::cli::add_show_command(app);
  nimble::cli::add_schedule_command(app);
  nimble::cli::add_demo_command(app);
  nimble::cli::add_export_command(app);
  nimble::cli::add_settings_command(app);
#ifdef NIMBLE_HAVE_RECORD
  nimble::cli::add_record_command(app);
  nimble::cli::add_bench_command(app);
  nimble::cli::add_run_command(app);
#endif

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  // Each subcommand's callback stores its exit code here.
  return nimble::cli::exit_code();
}
