// JSON document to the typed trace model, reporting every missing or ill-typed field.
#pragma once

#include <optional>
#include <string>

#include "json_parser.hpp"
#include "nimble/trace/diagnostics.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

// Consumes `root`. Returns nullopt only when the top level is not an object. Otherwise returns
// what could be converted even if there were errors (tasks whose id is unusable are left out), so
// the semantic checks can still run and every problem is reported in one go.
std::optional<Trace> trace_from_json(json&& root, Diagnostics& out);

// The location of a value found while parsing ("tasks", 3, "args" -> task 7 (index 3), field
// "args"), using the task's id when it has a usable one. `leaf` is appended to the field path.
Location location_of(const json& root, const JsonPath& path, const std::string& leaf = "");

}  // namespace nimble::trace::detail
