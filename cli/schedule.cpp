// nimble schedule IN -o OUT: assign every task a stream and the waits it needs.
#include <iostream>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "load.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/io.hpp"
#include "report.hpp"

namespace nimble::cli {
namespace {

struct ScheduleArgs {
  std::string input;
  std::string output;
  std::uint32_t max_streams = 0;
  bool stats = false;
  bool no_merge = false;
};

int run_schedule(const ScheduleArgs& args) {
  auto trace = load_or_report(args.input);
  if (!trace) return kExitBadInput;
  if (trace->schedule) {
    std::cerr << args.input << ": note: the existing schedule is replaced\n";
  }
  scheduler::Options options;
  options.max_streams = args.max_streams;
  options.merge_chains = !args.no_merge;
  const scheduler::Stats stats = scheduler::schedule_trace(*trace, options);
  if (auto error = trace::write_trace(*trace, args.output)) {
    std::cerr << "nimble schedule: " << *error << "\n";
    return kExitBadInput;
  }
  // Keep stdout clean for `-o -`: the summary goes to stderr.
  std::ostream& info = args.output == "-" ? std::cerr : std::cout;
  info << (args.output == "-" ? "<stdout>" : args.output) << ": " << stats.tasks << " tasks on "
       << stats.streams << " streams with " << stats.waits << " waits\n";
  if (args.stats) {
    print_task_kinds(info, *trace);
    print_plan(info, stats);
  }
  return kExitOk;
}

}  // namespace

void add_schedule_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("schedule", "Assign every task a stream and its waits; write the scheduled trace");
  cmd->footer(
      "Independent tasks go to different streams so they can run concurrently, with the fewest\n"
      "cross-stream waits (the Nimble algorithm: transitive reduction, maximum matching,\n"
      "chain merging). The input is validated first; a rejected input writes nothing and an\n"
      "existing OUT is left untouched. Example:\n"
      "  nimble schedule trace.json -o scheduled.json --max-streams 8 --stats");
  auto args = std::make_shared<ScheduleArgs>();
  cmd->add_option("IN", args->input, "trace JSON file, or - for standard input")->required();
  cmd->add_option("-o,--output", args->output, "scheduled trace to write, or - for standard output")
      ->required();
  cmd->add_option("--max-streams", args->max_streams,
                  "at most K streams (GPUs have few hardware queues; CUDA_DEVICE_MAX_CONNECTIONS "
                  "defaults to 8); streams are merged where it costs the least makespan. "
                  "0 = as many as the concurrency needs")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--stats", args->stats,
                "print the plan: edges, reduced edges, width, streams, waits, critical path and "
                "estimated makespans");
  cmd->add_flag("--no-merge", args->no_merge,
                "one stream per chain, as in the paper's first step (more streams)");
  cmd->callback([args] { exit_code() = run_schedule(*args); });
}

}  // namespace nimble::cli
