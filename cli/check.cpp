// nimble check FILE: validate a trace or scheduled trace and list every problem.
#include <iostream>
#include <string>

#include "commands.hpp"
#include "load.hpp"

namespace nimble::cli {

void add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Validate a trace or scheduled trace and list every problem found");
  cmd->footer(
      "Every problem is listed with where it is: JSON syntax errors with line and column,\n"
      "missing or ill-typed fields with the task id and field, duplicate ids, dependencies on\n"
      "unknown or later tasks, and a schedule that could start a task before one of its\n"
      "dependencies has finished. Exit status 0 when valid, 1 when any error was found.");
  auto file = std::make_shared<std::string>();
  cmd->add_option("FILE", *file, "trace JSON file, or - for standard input")->required();
  cmd->callback([file] {
    auto trace = load_or_report(*file);
    if (!trace) {
      exit_code() = kExitBadInput;
      return;
    }
    std::cout << *file << ": ok, " << trace->tasks.size() << " tasks"
              << (trace->schedule ? ", schedule valid" : "") << "\n";
  });
}

}  // namespace nimble::cli
