// Every `nimble` subcommand registers itself on the top-level app.
#pragma once

#include <CLI/CLI.hpp>

namespace nimble::cli {

void add_check_command(CLI::App& app);
void add_show_command(CLI::App& app);
void add_schedule_command(CLI::App& app);
void add_demo_command(CLI::App& app);
void add_export_command(CLI::App& app);  // cli/export.cpp
void add_record_command(CLI::App& app);  // cli/record.cpp
void add_bench_command(CLI::App& app);   // cli/bench.cpp
void add_run_command(CLI::App& app);     // cli/run.cpp
void add_settings_command(CLI::App& app);  // cli/settings.cpp

// Exit codes shared by all subcommands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;  // the trace was rejected or a file could not be written

// CLI11 callbacks return void: the chosen subcommand stores its exit status here.
inline int& exit_code() {
  static int code = kExitOk;
  return code;
}

}  // namespace nimble::cli
