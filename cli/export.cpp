// nimble export --format perfetto|dot TRACE -o OUT: a timeline or a dependency graph to look at.
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "load.hpp"
#include "nimble/export/dot.hpp"
#include "nimble/export/names.hpp"
#include "nimble/export/perfetto.hpp"
#include "nimble/replayer/renaming.hpp"
#include "nimble/trace/io.hpp"

namespace nimble::cli {
namespace {

struct ExportArgs {
  std::string format;
  std::string input;
  std::string output;
  std::uint32_t max_streams = 0;
  bool max_streams_given = false;
  bool reschedule = false;
  bool no_clusters = false;
  bool rename_memory = false;
};

int run_export(const ExportArgs& args) {
  auto trace = load_or_report(args.input);
  if (!trace) return kExitBadInput;
  const std::string shown_input = args.input == "-" ? "<stdin>" : args.input;
  const std::string shown_output = args.output == "-" ? "<stdout>" : args.output;
  // Keep stdout clean for `-o -`: notes and the summary go to stderr then.
  std::ostream& info = args.output == "-" ? std::cerr : std::cout;

  std::string text;
  std::string summary;
  std::string renamed;
  try {
    if (args.rename_memory) {
      // The DAG `nimble bench` replays: conflicts that were only address reuse dropped. The
      // stored schedule was made for the recorded dependencies, so the plan is made again.
      const replayer::RenameStats stats = replayer::rename_memory(*trace);
      renamed = "memory renamed: " + std::to_string(stats.edges_before) + " -> " +
                std::to_string(stats.edges_after) + " dependencies; ";
      trace->schedule.reset();
      for (auto& task : trace->tasks) task.schedule.reset();
    }
    if (args.format == "perfetto") {
      if (trace->schedule && !args.reschedule && args.max_streams_given) {
        std::cerr << "nimble export: note: --max-streams is ignored: " << shown_input
                  << " has a schedule (add --reschedule to schedule it again)\n";
      }
      exporter::PerfettoOptions options;
      options.plan.max_streams = args.max_streams;
      options.plan.reschedule = args.reschedule;
      options.source = shown_input;
      exporter::PerfettoExport result = exporter::export_perfetto(*trace, options);
      text = std::move(result.text);
      summary = std::to_string(result.tasks) + " tasks; recorded on " + std::to_string(result.recorded_lanes) +
                " lanes (" + std::to_string(result.recorded_with_start) +
                " at recorded start times); plan: " + result.plan.description + ", simulated makespan " +
                exporter::format_us(result.plan_makespan_us) + " us";
      if (result.tasks_without_duration > 0) {
        summary += "; " + std::to_string(result.tasks_without_duration) + " tasks without duration_us drawn 1 us";
      }
      summary += ". Open it in https://ui.perfetto.dev (Open trace file) or chrome://tracing";
    } else {
      if (args.max_streams_given || args.reschedule) {
        std::cerr << "nimble export: note: --max-streams and --reschedule only apply to --format perfetto\n";
      }
      exporter::DotOptions options;
      options.clusters = !args.no_clusters;
      options.source = shown_input;
      exporter::DotExport result = exporter::export_dot(*trace, options);
      text = std::move(result.text);
      summary = std::to_string(result.nodes) + " tasks, " + std::to_string(result.reduced_edges) +
                " edges after transitive reduction (of " + std::to_string(result.edges) + ")";
      if (result.clusters > 0) summary += ", " + std::to_string(result.clusters) + " " + result.grouping + " clusters";
      summary += ". Render it with: dot -Tsvg " + (args.output == "-" ? std::string("out.dot") : args.output) +
                 " -o out.svg";
    }
  } catch (const std::exception& e) {  // a validated trace should never get here
    std::cerr << "nimble export: " << shown_input << ": " << e.what() << "\n";
    return kExitBadInput;
  }

  if (auto error = trace::write_file_atomically(args.output, text)) {
    std::cerr << "nimble export: " << *error << "\n";
    return kExitBadInput;
  }
  info << shown_output << ": " << renamed << summary << "\n";
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export", "Write a trace as a Perfetto/Chrome timeline (perfetto) or a Graphviz dependency graph (dot)");
  cmd->footer(
      "Formats:\n"
      "  perfetto  Chrome/Perfetto trace-event JSON with two processes:\n"
      "            'recorded': one lane per program stream, tasks at their recorded GPU start\n"
      "              times (start_us), or back to back in issue order when the trace has none;\n"
      "            'scheduled plan': one lane per schedule stream (with its priority), times\n"
      "              simulated from duration_us, waits drawn as arrows. A trace without a schedule\n"
      "              is scheduled here first (--max-streams K limits the streams).\n"
      "            Tasks without duration_us are drawn 1 us long; the process names say so.\n"
      "            Open the file in https://ui.perfetto.dev (Open trace file) or chrome://tracing.\n"
      "  dot       Graphviz DOT of the dependency DAG after transitive reduction (edges implied by\n"
      "            longer paths left out), edges labelled with their dep_reasons, nodes coloured\n"
      "            by kind and boxed by stream. Render it: dot -Tsvg out.dot -o out.svg\n"
      "The input is validated first; a rejected input writes nothing and exits with 1.\n"
      "OUT is replaced atomically; - writes to standard output. Examples:\n"
      "  nimble export --format perfetto trace.json -o timeline.json\n"
      "  nimble export --format perfetto trace.json -o timeline.json --max-streams 4\n"
      "  nimble export --format dot scheduled.json -o graph.dot && dot -Tsvg graph.dot -o graph.svg\n"
      "  nimble export --format perfetto --rename-memory trace.json -o replayed.json\n"
      "See docs/export.md.");
  auto args = std::make_shared<ExportArgs>();
  cmd->add_option("--format", args->format, "perfetto (timeline JSON) or dot (Graphviz graph)")
      ->required()
      ->check(CLI::IsMember({"perfetto", "dot"}));
  cmd->add_option("IN", args->input, "trace JSON file, or - for standard input")->required();
  cmd->add_option("-o,--output", args->output, "file to write, or - for standard output")->required();
  cmd->add_option("--max-streams", args->max_streams,
                  "perfetto: when the trace has no schedule (or with --reschedule), schedule it onto "
                  "at most K streams; 0 = as many as the concurrency needs")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--reschedule", args->reschedule,
                "perfetto: show a fresh nimble schedule instead of the one stored in the trace");
  cmd->add_flag("--no-clusters", args->no_clusters, "dot: do not box nodes by stream");
  cmd->add_flag("--rename-memory", args->rename_memory,
                "drop dependencies that exist only because the allocator reused an address, as "
                "`nimble bench` does before replaying (each freed allocation gets memory of its own "
                "there); the plan is then scheduled afresh");
  cmd->callback([args, cmd] {
    args->max_streams_given = cmd->count("--max-streams") > 0;
    exit_code() = run_export(*args);
  });
}

}  // namespace nimble::cli
