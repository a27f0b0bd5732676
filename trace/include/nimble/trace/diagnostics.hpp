// Problems found in a trace, each naming where it is (line/column, task id, field).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nimble::trace {

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string where;    // e.g. "line 3, column 14", "task 12 (index 11), field \"deps\"", "top level"
  std::string message;  // what is wrong and, where useful, what to do
  std::optional<std::int64_t> task_id;
  std::string field;    // path inside the task or the top level: "deps", "schedule.waits", "launch.grid"
  std::optional<std::size_t> task_index;  // position in "tasks" (also set when the id is unusable)
  std::optional<std::size_t> line;        // 1-based; set for problems found while parsing the text
  std::optional<std::size_t> column;      // 1-based, in characters
};

// Where a problem is. Build one with the at_* helpers below.
struct Location {
  std::string where;
  std::optional<std::int64_t> task_id;
  std::optional<std::size_t> task_index;
  std::string field;
  std::optional<std::size_t> line;
  std::optional<std::size_t> column;
};

// "task 12 (index 11), field \"deps\"" (the field part only when `field` is not empty).
Location at_task(std::int64_t id, std::size_t index, const std::string& field = "");
// A task whose id is missing or unusable: "task at index 5, field \"id\"".
Location at_task_index(std::size_t index, const std::string& field = "");
// "top level, field \"version\"".
Location at_top(const std::string& field = "");
// "line 3, column 14".
Location at_position(std::size_t line, std::size_t column);
// The file as a whole (cannot be opened, is empty, ...): no WHERE part in the formatted line.
Location at_file();

struct Diagnostics {
  std::vector<Diagnostic> items;

  // add/error/warning store at most `max_items` problems and count the rest, so a file with a
  // million broken tasks still gives a readable report. Pushing to `items` directly bypasses it.
  std::size_t max_items = 1000;
  std::size_t suppressed_errors = 0;
  std::size_t suppressed_warnings = 0;

  void add(Diagnostic diagnostic);
  // True once add() only counts: checks that can find 100,000 problems skip building messages.
  bool full() const { return items.size() >= max_items; }
  void error(const Location& location, std::string message);
  void warning(const Location& location, std::string message);
  void append(const Diagnostics& other);

  bool has_errors() const;
  std::size_t error_count() const;    // includes suppressed ones
  std::size_t warning_count() const;  // includes suppressed ones
  // One line per problem: "FILE: error: WHERE: MESSAGE" (or "warning:"), then, if some were
  // suppressed, one "FILE: note: ..." line that says how many.
  std::string format(const std::string& file) const;
};

}  // namespace nimble::trace
