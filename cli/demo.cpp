// nimble demo: the main job on a bundled sample, so a fresh checkout shows what nimble does.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "load.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "report.hpp"

namespace nimble::cli {
namespace {

int run_demo(std::string path, std::uint32_t max_streams) {
  if (path.empty()) path = bundled_sample_path();
  auto trace = load_or_report(path);
  if (!trace) return kExitBadInput;
  scheduler::Options options;
  options.max_streams = max_streams;
  const scheduler::Stats stats = scheduler::schedule_trace(*trace, options);

  std::cout << "nimble demo: scheduling " << path << "\n";
  print_task_kinds(std::cout, *trace);
  print_plan(std::cout, stats);
  std::cout << "\nplan (task: stream, waits):\n";
  for (const auto& task : trace->tasks) {
    const std::string name = task.extra.value("name", task.kind);
    std::cout << "  " << task.id << "  s" << task.schedule->stream;
    if (!task.schedule->waits.empty()) {
      std::cout << "  waits";
      for (auto id : task.schedule->waits) std::cout << " " << id;
    }
    std::cout << "  " << (name.size() > 60 ? name.substr(0, 57) + "..." : name) << "\n";
  }
  std::cout << "\nNext: `nimble schedule " << path << " -o scheduled.json --stats`, then "
            << "`nimble check scheduled.json`.\n";
  return kExitOk;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "Schedule the bundled sample trace and print the plan");
  cmd->footer(
      "The sample is an Inception-style block recorded as a trace. The plan lists every task\n"
      "with its stream and waits, and the estimated makespan on one stream vs nimble's streams.");
  auto path = std::make_shared<std::string>();
  auto max_streams = std::make_shared<std::uint32_t>(0);
  cmd->add_option("--trace", *path, "schedule this trace instead of the bundled sample");
  cmd->add_option("--max-streams", *max_streams, "at most K streams (0 = unlimited)");
  cmd->callback([path, max_streams] { exit_code() = run_demo(*path, *max_streams); });
}

}  // namespace nimble::cli
