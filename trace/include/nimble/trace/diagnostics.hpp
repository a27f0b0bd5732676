// Problems found in a trace, each naming where it is (line/column, task id, field).
#pragma once

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
  std::string field;
};

struct Diagnostics {
  std::vector<Diagnostic> items;
  bool has_errors() const;
  std::size_t error_count() const;
  std::size_t warning_count() const;
  // One line per problem: "FILE: error: WHERE: MESSAGE".
  std::string format(const std::string& file) const;
};

}  // namespace nimble::trace
