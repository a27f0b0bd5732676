// Helpers shared by the trace tests: building inputs, finding diagnostics, timing, temp dirs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimble/trace/diagnostics.hpp"
#include "nimble/trace/io.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace::testing {

// The repository root (for docs/).
std::filesystem::path source_dir();
std::string read_file(const std::filesystem::path& path);

// A complete trace document around `tasks_json` (the text between the brackets of "tasks"),
// with `top_level_extra` (e.g. "\"schedule\": {...},") inserted before "tasks".
std::string trace_text(const std::string& tasks_json, const std::string& top_level_extra = "");

// The first diagnostic of `severity` whose message contains `text` and, when given, that names
// `task_id` / has `field`; nullptr if none.
const Diagnostic* find(const Diagnostics& diagnostics, Severity severity, std::string_view text,
                       std::optional<TaskId> task_id = std::nullopt, std::optional<std::string> field = std::nullopt);
std::size_t count(const Diagnostics& diagnostics, Severity severity);
// All diagnostics, formatted, for failure messages.
std::string dump(const Diagnostics& diagnostics);

// A trace in memory: tasks with the given deps (ids 0..n-1).
Trace trace_with_deps(const std::vector<std::vector<TaskId>>& deps);
// Adds a schedule: stream per task and waits per task.
void schedule(Trace& trace, const std::vector<int>& streams, const std::vector<std::vector<TaskId>>& waits,
              int stream_count);

// CPU seconds used by this process (stable when other work shares the machine).
double cpu_seconds();
// The budget "a second or two" for inputs that must be handled fast; generous in debug builds.
double fast_budget_seconds();

// Peak resident memory since the last reset, in MiB; reset returns false where Linux does not
// support resetting it (then the peak is the process's whole lifetime).
bool reset_peak_memory();
double peak_memory_mib();

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::vector<std::string> entries() const;  // file names in it, sorted

 private:
  std::filesystem::path path_;
};

}  // namespace nimble::trace::testing
