// A small JSON Schema (draft 2020-12) checker for the keywords docs/trace.schema.json uses, so the
// tests can check the examples against the schema without a schema library.
#pragma once

#include <string>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::trace::testing {

// Problems of `instance` against `schema`, one string each ("/tasks/3/id: required ...").
// Supported: type, enum, const, required, properties, additionalProperties, items, minItems,
// maxItems, minimum, maximum, minLength, pattern, anyOf, $ref ("#/$defs/NAME"). Annotations
// (title, description, examples, ...) are ignored; any other keyword is reported as unsupported,
// so the schema cannot quietly rely on something this checker does not check.
std::vector<std::string> schema_problems(const json& schema, const json& instance);

}  // namespace nimble::trace::testing
