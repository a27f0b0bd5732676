// Small helpers shared by the converter and the validators: type checks on JSON values and
// short, one-line descriptions of values for messages.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "json_parser.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

// "launch.grid[1]", "args.params[0].offset".
std::string render_path(const JsonPath& path);

// For messages: "a string (\"12\")", "a number with a fraction (1.5)", "an array", "null", ...
std::string describe_value(const json& value);

// JSON-escaped and shortened, so values from the file cannot break the one-line format.
std::string quoted(const std::string& text, std::size_t max_chars = 40);

struct IntCheck {
  std::optional<std::int64_t> value;  // set when the value is an integer in [min, max]
  std::string problem;                // otherwise: "must be an integer, got ..." and the like
};
IntCheck check_int(const json& value, std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                   std::int64_t max = std::numeric_limits<std::int64_t>::max());

// Integers only (3, not 3.0), within int64.
std::optional<std::int64_t> as_int64(const json& value);

// "0x" and 1 to 16 hex digits: how traces write addresses and handles.
bool is_hex_address(const json& value);
std::optional<std::uint64_t> parse_hex_address(const json& value);

// An even number of hex digits: argument bytes.
bool is_hex_bytes(const std::string& text);

// Appends a key known not to be in `object` in O(1); ordered_map's own insert searches every key.
void append_member(json& object, std::string key, json value);

}  // namespace nimble::trace::detail
