// Reading and writing trace files. Reading validates and collects every problem.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "nimble/trace/diagnostics.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace {

struct LoadResult {
  std::optional<Trace> trace;  // set when there is no error (warnings allowed)
  Diagnostics diagnostics;
};

// Parse and validate text; never throws for bad input.
LoadResult parse_trace(const std::string& text);
// Read a file ("-" = stdin); unreadable files become a diagnostic.
LoadResult load_trace(const std::string& path);

json to_json(const Trace& trace);
std::string dump_trace(const Trace& trace);  // pretty, stable field order, trailing newline

// Write atomically: a temporary file beside `path`, then rename, so a failed write never
// clobbers an existing file. "-" writes to stdout. Returns an error message or nullopt.
std::optional<std::string> write_trace(const Trace& trace, const std::string& path);

}  // namespace nimble::trace
