// nimble show FILE: what a trace holds and what scheduling it would give.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "hints.hpp"
#include "load.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "report.hpp"

namespace nimble::cli {

void add_show_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("show", "Summarise a trace and the schedule nimble would give it");
  cmd->footer(
      "Prints tasks by kind (and by issuing thread, when several threads issued them),\n"
      "dependency edges, edges after transitive reduction, width, the streams and waits of the\n"
      "Nimble schedule, the critical path and the estimated makespan on one stream and on\n"
      "nimble's streams. For a scheduled trace it also simulates the schedule stored in the\n"
      "file. The file is not changed.");
  auto file = std::make_shared<std::string>();
  cmd->add_option("FILE", *file, "trace JSON file, or - for standard input")->required();
  cmd->callback([file] {
    auto trace = load_or_report(*file);
    if (!trace) {
      exit_code() = kExitBadInput;
      return;
    }
    std::cout << *file << "\n";
    if (auto capture = capture_text(*trace)) std::cout << "  captured                  " << *capture << "\n";
    print_task_kinds(std::cout, *trace);
    print_issuers(std::cout, *trace);
    if (auto stored = simulate_stored_schedule(*trace)) {
      std::cout << "  stored schedule           " << trace->schedule->algorithm << ", "
                << trace->schedule->streams << " streams, " << trace->schedule->syncs
                << " waits, simulated makespan " << *stored << " us\n";
    }
    trace::Trace copy = *trace;  // schedule a copy: show never changes the input
    const scheduler::Stats stats = scheduler::schedule_trace(copy);
    print_plan(std::cout, stats);
    if (auto hint = shared_allocation_hint(*trace)) std::cout << "  note: " << *hint << "\n";
  });
}

}  // namespace nimble::cli
