// Text to JSON document: encoding marks, emptiness, nesting depth and syntax, each problem with
// its line and column. Nothing here knows what a trace is.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "json_parser.hpp"
#include "nimble/trace/diagnostics.hpp"

namespace nimble::trace::detail {

// On failure adds diagnostics and returns nullopt.
std::optional<JsonDocument> parse_json_document(std::string_view text, std::size_t max_depth, Diagnostics& out);

}  // namespace nimble::trace::detail
