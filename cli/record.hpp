// nimble record: run a program under libnimble.so and summarise the trace it leaves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nimble/trace/trace.hpp"
#include "settings/settings.hpp"

namespace nimble::cli {

void add_record_command(CLI::App& app);

// What record, bench and run run the program with. Each field sets the variable of the same
// name in the settings list (interposer/settings/settings.def), whose default it starts from; a
// command changes those it needs.
struct RecordOptions {
  std::string output;  // "": -o is required
  std::string capture_range = settings::defaults::range_text;
  int iteration = settings::defaults::iteration;
  std::string dependencies = settings::defaults::dependencies;  // docs/dependencies.md
  int bench_iterations = settings::defaults::bench_iterations;  // nimble bench: replays per backend (0: record only)
  bool run = settings::defaults::run;                   // nimble run: replay later iterations that match the recorded one
  int run_compare = settings::defaults::run_compare;    // nimble run --compare N
  // Set only where given: the program then gets the library's default, or what the caller's own
  // environment says.
  std::optional<int> bench_max_streams;  // nimble bench: cap on the schedule's streams (0: none)
  std::optional<int> run_piece;          // nimble run: ops per launched piece (0: whole segments)
  std::optional<int> run_max_streams;    // nimble run: streams inside the graphs
  std::vector<std::string> command;
};

// -o, --capture-range, --iteration and COMMAND, as record, bench and run share them: -o is
// required when `options` has no output yet, and the help states each default, the value
// `options` holds now.
void add_recording_options(CLI::App& cmd, RecordOptions& options);

// --dependencies, the same way (record and bench).
void add_dependencies_option(CLI::App& cmd, RecordOptions& options);

// One process's trace: the -o file, or, for a program of several ranks (torchrun, mpirun, srun),
// each rank's TRACE.rankR.json, or each file an -o with %p or %r made (settings/output_path.hpp).
struct RecordedProcess {
  std::string path;
  std::string who;  // "" for the one process, "rank R", or "process P" (-o with %p)
  int status = 0;   // the program's exit status
  trace::Trace trace;
};

// Runs the program under libnimble.so as `options` say and loads the traces its processes
// wrote, rank by rank. Prints what went wrong (prefixed with `verb`) and sets exit_code(); empty
// on failure.
std::vector<RecordedProcess> record_program(const RecordOptions& options, const std::string& verb);

// "" for a single process, " (rank R)" / " (process P)" for one of several.
std::string rank_note(const RecordedProcess& process);

// The JSON object in `file` (results written beside the trace at exit: TRACE.run.json,
// TRACE.bench.json) when this run of the process wrote it; null when it is missing, not an object,
// or left by an earlier run.
trace::json results_written_with(const std::string& file, const RecordedProcess& process);

// build/lib/libnimble.so for build/bin/nimble: ../lib/libnimble.so beside the executable.
std::string preload_library_path();

// The variables the recorded program gets ("NAME=value"); `ld_preload` is the current
// LD_PRELOAD (or nullptr), which is kept after libnimble.so.
std::vector<std::string> record_environment(const RecordOptions& options, const std::string& preload,
                                            const char* ld_preload);

// Exit status of a waited-for child as a shell reports it: its code, or 128 + signal.
int exit_status(int wait_status);

// What `nimble record` prints about a recorded trace.
std::string summarize_recording(const trace::Trace& trace);

}  // namespace nimble::cli
