#include "json_checks.hpp"

#include "nimble/trace/recorded.hpp"

#include "json_text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace nimble::trace::detail {

std::string render_path(const JsonPath& path) {
  std::string text;
  for (const auto& step : path) {
    if (const auto* key = std::get_if<std::string>(&step)) {
      if (!text.empty()) text += '.';
      text += *key;
    } else {
      text += '[' + std::to_string(std::get<std::size_t>(step)) + ']';
    }
  }
  return text;
}

std::string quoted(const std::string& text, std::size_t max_chars) {
  std::string escaped;
  append_json_string(text, escaped);
  if (escaped.size() <= max_chars + 2) return escaped;
  // Cut between whole units (an escape such as \u00e9, or a UTF-8 character), never inside one.
  std::size_t cut = 1;  // after the opening quote
  while (cut < escaped.size() - 1) {
    std::size_t unit = 1;
    if (escaped[cut] == '\\') unit = escaped[cut + 1] == 'u' ? 6 : 2;
    else while (cut + unit < escaped.size() && (static_cast<unsigned char>(escaped[cut + unit]) & 0xC0) == 0x80) ++unit;
    if (cut + unit > max_chars + 1) break;
    cut += unit;
  }
  return escaped.substr(0, cut) + "...\"";
}

std::string describe_value(const json& value) {
  const auto shown = [&] {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    return text.size() > 40 ? text.substr(0, 37) + "..." : text;
  };
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
    case json::value_t::string: return "a string (" + quoted(value.get_ref<const std::string&>()) + ")";
    case json::value_t::number_integer: return "the integer " + shown();
    case json::value_t::number_unsigned:
      return as_int64(value) ? "the integer " + shown() : "an integer too large for 64 bits (" + shown() + ")";
    case json::value_t::number_float:
      if (!std::isfinite(value.get<double>())) return "a number too large for a double";
      return "a number with a fraction or exponent (" + shown() + ")";
    case json::value_t::array: return value.empty() ? "an empty array" : "an array";
    case json::value_t::object: return value.empty() ? "an empty object" : "an object";
    default: return "a binary value";
  }
}

std::optional<std::int64_t> as_int64(const json& value) {
  if (value.is_number_integer() && !value.is_number_unsigned()) return value.get<std::int64_t>();
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return static_cast<std::int64_t>(u);
    }
  }
  return std::nullopt;
}

IntCheck check_int(const json& value, std::int64_t min, std::int64_t max) {
  IntCheck result;
  const auto number = as_int64(value);
  if (!number) {
    result.problem = "must be an integer, got " + describe_value(value);
    if (value.is_number_float() && std::isfinite(value.get<double>()) &&
        value.get<double>() == std::floor(value.get<double>())) {
      result.problem += "; write it without a decimal point or exponent";
    }
    return result;
  }
  if (*number < min) {
    result.problem = "must be at least " + std::to_string(min) + ", got " + std::to_string(*number);
  } else if (*number > max) {
    result.problem = "must be at most " + std::to_string(max) + ", got " + std::to_string(*number);
  } else {
    result.value = number;
  }
  return result;
}

bool is_hex_address(const json& value) { return parse_hex_address(value).has_value(); }

std::optional<std::uint64_t> parse_hex_address(const json& value) {
  if (!value.is_string()) return std::nullopt;
  return trace::parse_hex_address(value.get_ref<const std::string&>());
}

bool is_hex_bytes(const std::string& text) {
  if (text.size() % 2 != 0) return false;
  for (const char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

void append_member(json& object, std::string key, json value) {
  object.get_ref<json::object_t&>().emplace_back(std::move(key), std::move(value));
}

}  // namespace nimble::trace::detail
