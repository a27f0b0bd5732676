// nimble record: run a program under libnimble.so and summarise the trace it leaves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "nimble/trace/trace.hpp"

namespace nimble::cli {

void add_record_command(CLI::App& app);

struct RecordOptions {
  std::string output;
  std::string capture_range = "cudaProfilerApi";
  int iteration = 1;
  std::string dependencies = "stream-order";  // or "memory" (docs/dependencies.md)
  int bench_iterations = 0;  // nimble bench: replays per backend (0: record only)
  int bench_max_streams = -1;  // nimble bench: cap on the schedule's streams (0: none; -1: the library's default)
  bool run = false;            // nimble run: replay later iterations that match the recorded one
  int run_piece = -1;          // nimble run: ops per launched piece (0: whole segments; -1: the library's default)
  int run_max_streams = -1;    // nimble run: streams inside the graphs (-1: the library's default)
  int run_compare = 0;         // nimble run --compare N: alternate blocks of N replayed and plain iterations
  std::vector<std::string> command;
};


// Runs the program under libnimble.so as `options` say and loads the trace it wrote. Prints
// what went wrong (prefixed with `verb`) and sets exit_code(); the trace is empty on failure.
std::optional<trace::Trace> record_program(const RecordOptions& options, const std::string& verb);

// build/lib/libnimble.so for build/bin/nimble: ../lib/libnimble.so beside the executable.
std::string preload_library_path();

// "" if `policy` is stream-order or memory, else what is wrong with it.
std::string check_dependencies(const std::string& policy);

// "" if `range` is cudaProfilerApi, auto or nvtx:NAME, else what is wrong with it.
std::string check_capture_range(const std::string& range);

// The variables the recorded program gets ("NAME=value"); `ld_preload` is the current
// LD_PRELOAD (or nullptr), which is kept after libnimble.so.
std::vector<std::string> record_environment(const RecordOptions& options, const std::string& preload,
                                            const char* ld_preload);

// Exit status of a waited-for child as a shell reports it: its code, or 128 + signal.
int exit_status(int wait_status);

// What `nimble record` prints about a recorded trace.
std::string summarize_recording(const trace::Trace& trace);

}  // namespace nimble::cli
