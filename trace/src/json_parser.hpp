// A strict JSON (RFC 8259) parser that builds nlohmann::ordered_json values.
//
// Why not nlohmann's parser: it reads about 30-50 MB/s (a 100 MB trace took 3.5 s), inserts each
// object key with a linear search (an object of 5 million keys took minutes), and keeps one of two
// duplicate keys without a word. This one reads several hundred MB/s, reports duplicate keys and
// numbers too large for a double with their path, stops at a depth limit (so recursion is bounded),
// and reports the exact byte offset of a syntax error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

// One step of a path from the root: an object key or an array index.
using PathStep = std::variant<std::string, std::size_t>;
using JsonPath = std::vector<PathStep>;

struct DuplicateKey {
  JsonPath object_path;  // the object that holds the key more than once (the first one is kept)
  std::string key;
};

// A number too large for a double, such as 1e999: stored as infinity, which JSON cannot express.
struct NonFiniteNumber {
  JsonPath path;
  std::string text;  // as written
};

struct JsonDocument {
  json root;
  std::vector<DuplicateKey> duplicate_keys;  // the first kMaxFindings
  std::size_t duplicate_key_count = 0;
  std::vector<NonFiniteNumber> non_finite_numbers;  // the first kMaxFindings
  std::size_t non_finite_count = 0;
};

struct JsonSyntaxError {
  std::size_t offset = 0;  // 0-based byte offset of the offending character (text size at end of input)
  std::string message;
};

inline constexpr std::size_t kMaxFindings = 100;

// The whole text must be one JSON value, with optional whitespace around it.
std::variant<JsonDocument, JsonSyntaxError> parse_json(std::string_view text, std::size_t max_depth);

}  // namespace nimble::trace::detail
