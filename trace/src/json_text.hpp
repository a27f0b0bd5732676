// JSON text of scalars, shared by the parser (UTF-8 rules) and the writer. Written by hand rather
// than with json::dump because a 100,000-task trace has millions of scalars and dump() builds a
// serializer for each.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

// Bytes a JSON string holds as they are: printable ASCII except '"' and '\'.
inline constexpr std::array<bool, 256> kPlainStringByte = [] {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x80; ++c) table[c] = c != '"' && c != '\\';
  return table;
}();

// Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, surrogates or code points
// past U+10FFFF), or 0 if the bytes there are not valid UTF-8.
std::size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end);

// Appends a code point (at most U+10FFFF) as UTF-8.
void append_utf8(std::uint32_t code_point, std::string& out);

// A string literal: quotes, escapes as nlohmann writes them (\" \\ \b \f \n \r \t \u00XX), and
// each invalid UTF-8 byte replaced by U+FFFD, so the output is always valid JSON.
void append_json_string(const std::string& text, std::string& out);

// A scalar (string, number, boolean, null). Doubles use the shortest text that reads back to the
// same value and keep a ".0" when integral, so they stay doubles; non-finite ones become null,
// as in nlohmann.
void append_json_scalar(const json& value, std::string& out);

}  // namespace nimble::trace::detail
