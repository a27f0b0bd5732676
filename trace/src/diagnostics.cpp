// Diagnostics: locations, collection with a storage cap, and the one-line-per-problem format.
#include "nimble/trace/diagnostics.hpp"

#include <utility>

namespace nimble::trace {
namespace {

std::string with_field(std::string where, const std::string& field) {
  if (!field.empty()) where += ", field \"" + field + "\"";
  return where;
}

}  // namespace

Location at_task(std::int64_t id, std::size_t index, const std::string& field) {
  Location location;
  location.where = with_field(
      "task " + std::to_string(id) + " (index " + std::to_string(index) + ")", field);
  location.task_id = id;
  location.task_index = index;
  location.field = field;
  return location;
}

Location at_task_index(std::size_t index, const std::string& field) {
  Location location;
  location.where = with_field("task at index " + std::to_string(index), field);
  location.task_index = index;
  location.field = field;
  return location;
}

Location at_top(const std::string& field) {
  Location location;
  location.where = with_field("top level", field);
  location.field = field;
  return location;
}

Location at_position(std::size_t line, std::size_t column) {
  Location location;
  location.where = "line " + std::to_string(line) + ", column " + std::to_string(column);
  location.line = line;
  location.column = column;
  return location;
}

Location at_file() { return Location{}; }

void Diagnostics::add(Diagnostic diagnostic) {
  if (items.size() >= max_items) {
    ++(diagnostic.severity == Severity::Error ? suppressed_errors : suppressed_warnings);
    return;
  }
  items.push_back(std::move(diagnostic));
}

static Diagnostic make(Severity severity, const Location& location, std::string message) {
  Diagnostic d;
  d.severity = severity;
  d.where = location.where;
  d.message = std::move(message);
  d.task_id = location.task_id;
  d.field = location.field;
  d.task_index = location.task_index;
  d.line = location.line;
  d.column = location.column;
  return d;
}

void Diagnostics::error(const Location& location, std::string message) {
  add(make(Severity::Error, location, std::move(message)));
}

void Diagnostics::warning(const Location& location, std::string message) {
  add(make(Severity::Warning, location, std::move(message)));
}

void Diagnostics::append(const Diagnostics& other) {
  for (const auto& d : other.items) add(d);
  suppressed_errors += other.suppressed_errors;
  suppressed_warnings += other.suppressed_warnings;
}

std::size_t Diagnostics::error_count() const {
  std::size_t n = suppressed_errors;
  for (const auto& d : items) n += d.severity == Severity::Error;
  return n;
}

std::size_t Diagnostics::warning_count() const {
  std::size_t n = suppressed_warnings;
  for (const auto& d : items) n += d.severity == Severity::Warning;
  return n;
}

bool Diagnostics::has_errors() const { return error_count() > 0; }

std::string Diagnostics::format(const std::string& file) const {
  std::string text;
  for (const auto& d : items) {
    text += file;
    text += d.severity == Severity::Error ? ": error: " : ": warning: ";
    if (!d.where.empty()) text += d.where + ": ";
    text += d.message;
    text += '\n';
  }
  if (suppressed_errors + suppressed_warnings > 0) {
    text += file + ": note: " + std::to_string(suppressed_errors) + " more error(s) and " +
            std::to_string(suppressed_warnings) + " more warning(s) not shown\n";
  }
  return text;
}

}  // namespace nimble::trace
