// Reading and writing trace files. Reading validates and collects every problem.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "nimble/trace/diagnostics.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace {

// Inputs beyond these limits are refused with a diagnostic instead of exhausting the stack or
// memory. Real traces nest about 6 levels deep.
inline constexpr std::size_t kMaxNestingDepth = 256;
inline constexpr std::size_t kMaxTraceBytes = std::size_t{1} << 30;  // 1 GiB

struct LoadResult {
  std::optional<Trace> trace;  // set when there is no error (warnings allowed)
  Diagnostics diagnostics;
};

// Parse and validate text; never throws for bad input. Runs validate_trace() too, so the result
// holds every problem: syntax (with line and column), structure, dependencies, schedule.
LoadResult parse_trace(const std::string& text);
// Read a file ("-" = stdin); unreadable files become a diagnostic.
LoadResult load_trace(const std::string& path);

json to_json(const Trace& trace);
std::string dump_trace(const Trace& trace);  // pretty, stable field order, trailing newline

// The pretty printer behind dump_trace, for other JSON a tool writes: 2-space indent; a
// container that fits in 100 columns (200 if it holds only scalars) stays on one line.
// Deterministic; invalid UTF-8 in strings is replaced, never thrown. No trailing newline.
std::string pretty_json(const json& value);

// Write atomically: a temporary file beside `path`, then rename, so a failed write never
// clobbers an existing file. "-" writes to stdout. Returns an error message or nullopt.
std::optional<std::string> write_trace(const Trace& trace, const std::string& path);
// The same for any text (used by write_trace).
std::optional<std::string> write_file_atomically(const std::string& path, std::string_view text);

}  // namespace nimble::trace
