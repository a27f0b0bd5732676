// The pretty printer shared by pretty_json and dump_trace.
#pragma once

#include <cstddef>
#include <string>

#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

// A container goes on one line when it fits within kLineWidth columns. A flat one (only scalars
// inside: a mem entry, an allocation, a deps list) may use up to kFlatLineWidth: one record per
// line reads better than a record spread over eight.
inline constexpr std::size_t kLineWidth = 100;
inline constexpr std::size_t kFlatLineWidth = 200;

// Appends `value` at nesting `indent` (spaces) when `column` characters of the current line are
// already used. Containers that fit (see above) go on one line if `allow_one_line` is set;
// otherwise one member per line, 2 more spaces of indent.
void write_pretty(const json& value, std::size_t indent, std::size_t column, bool allow_one_line,
                  std::string& out);

// Appends a JSON string literal (escaped; invalid UTF-8 replaced, never thrown).
void write_string(const std::string& text, std::string& out);

}  // namespace nimble::trace::detail
