#include "json_text.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace nimble::trace::detail {
namespace {

template <typename Number>
void append_number(Number number, std::string& out) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  out.append(buffer, result.ptr);
}

void append_double(double number, std::string& out) {
  if (!std::isfinite(number)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, number);
  const std::string_view text(buffer, static_cast<std::size_t>(result.ptr - buffer));
  out += text;
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

}  // namespace

std::size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end) {
  const auto continuation = [&](std::size_t i, unsigned char low = 0x80, unsigned char high = 0xBF) {
    return p + i < end && p[i] >= low && p[i] <= high;
  };
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return continuation(1) ? 2 : 0;
  if (c == 0xE0) return continuation(1, 0xA0) && continuation(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return continuation(1) && continuation(2) ? 3 : 0;
  if (c == 0xED) return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : 0;
  if (c == 0xF0) return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return continuation(1) && continuation(2) && continuation(3) ? 4 : 0;
  if (c == 0xF4) return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : 0;
  return 0;
}

void append_utf8(std::uint32_t code_point, std::string& out) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

void append_json_string(const std::string& text, std::string& out) {
  static const char* kHex = "0123456789abcdef";
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  out += '"';
  while (p != end) {
    const auto* run = p;
    while (p != end && kPlainStringByte[*p]) ++p;
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
    if (p == end) break;
    const unsigned char c = *p;
    switch (c) {
      case '"': out += "\\\""; ++p; continue;
      case '\\': out += "\\\\"; ++p; continue;
      case '\b': out += "\\b"; ++p; continue;
      case '\f': out += "\\f"; ++p; continue;
      case '\n': out += "\\n"; ++p; continue;
      case '\r': out += "\\r"; ++p; continue;
      case '\t': out += "\\t"; ++p; continue;
      default: break;
    }
    if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++p;
      continue;
    }
    const std::size_t length = utf8_sequence_length(p, end);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), length);
      p += length;
    }
  }
  out += '"';
}

void append_json_scalar(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::string: append_json_string(value.get_ref<const std::string&>(), out); return;
    case json::value_t::number_integer: append_number(value.get<std::int64_t>(), out); return;
    case json::value_t::number_unsigned: append_number(value.get<std::uint64_t>(), out); return;
    case json::value_t::number_float: append_double(value.get<double>(), out); return;
    case json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case json::value_t::null: out += "null"; return;
    default: out += value.dump(-1, ' ', false, json::error_handler_t::replace); return;  // binary, discarded
  }
}

}  // namespace nimble::trace::detail
