// Loading a trace for a subcommand: problems go to stderr in the one shared format.
#pragma once

#include <optional>
#include <string>

#include "nimble/trace/trace.hpp"

namespace nimble::cli {

// Prints every diagnostic (errors and warnings) to stderr; returns the trace only if it is valid.
std::optional<trace::Trace> load_or_report(const std::string& path);

// The bundled sample trace used by `nimble demo` (searched next to the executable's source tree
// and install prefix).
std::string bundled_sample_path();

}  // namespace nimble::cli
