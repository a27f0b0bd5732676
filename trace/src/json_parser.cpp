#include "json_parser.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "json_text.hpp"
#include "repeated_keys.hpp"

namespace nimble::trace::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// kBuild = false: only check the syntax, building nothing. A first pass in that mode finds a
// syntax error in a 100 MB file in a tenth of a second, where building the document first would
// take seconds; the second pass builds. Both passes share this code, so they agree on every error.
template <bool kBuild>
class Parser {
 public:
  Parser(std::string_view text, std::size_t max_depth, JsonDocument& document)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth),
        document_(document), scratch_(kBuild ? max_depth : 0) {}  // sized once: frames hold references into it

  bool parse() {
    if (!value(document_.root, 0)) return false;
    skip_whitespace();
    if (p_ != end_) return fail(p_, "unexpected " + found() + " after the end of the JSON value; a file holds one value");
    return true;
  }

  JsonSyntaxError error;

 private:
  // ---- errors ----
  bool fail(const char* at, std::string message) {
    error.offset = static_cast<std::size_t>(at - begin_);
    error.message = std::move(message);
    return false;
  }
  std::string found() const {
    if (p_ == end_) return "end of input";
    const auto c = static_cast<unsigned char>(*p_);
    if (c >= 0x21 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
    static const char* kHex = "0123456789ABCDEF";
    return std::string("byte 0x") + kHex[c >> 4] + kHex[c & 15];
  }
  bool truncated(const char* inside) {
    return fail(end_, std::string("unexpected end of input inside ") + inside + "; is the file truncated?");
  }

  // ---- structure ----
  void skip_whitespace() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool value(json& out, std::size_t depth) {
    skip_whitespace();
    if (p_ == end_) return fail(end_, "unexpected end of input where a value was expected; is the file truncated?");
    switch (*p_) {
      case '{':
      case '[':
        if (depth + 1 > max_depth_) {
          return fail(p_, "arrays and objects are nested more than " + std::to_string(max_depth_) +
                              " levels deep; a trace needs fewer than 10 (is the file corrupted?)");
        }
        return *p_ == '{' ? object(out, depth + 1) : array(out, depth + 1);
      case '"': {
        if constexpr (!kBuild) return string(nullptr);
        std::string text;
        if (!string(&text)) return false;
        out = std::move(text);
        return true;
      }
      case 't': return literal("true", json(true), out);
      case 'f': return literal("false", json(false), out);
      case 'n': return literal("null", json(nullptr), out);
      case '/': return fail(p_, "comments are not allowed in JSON");
      default:
        if (*p_ == '-' || is_digit(*p_)) return number(out);
        if (*p_ == 'N' || *p_ == 'I') return fail(p_, "NaN and Infinity are not JSON numbers");
        return fail(p_, "expected a value (object, array, string, number, true, false or null) but found " + found());
    }
  }

  bool literal(std::string_view word, json&& literal_value, json& out) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      return fail(p_, "invalid literal; expected true, false or null");
    }
    p_ += word.size();
    if constexpr (kBuild) out = std::move(literal_value);
    return true;
  }

  bool array(json& out, std::size_t depth) {
    ++p_;  // '['
    json* elements = nullptr;  // the array's storage, when building
    if constexpr (kBuild) {
      out = json::array();
      elements = &out;
    }
    skip_whitespace();
    if (p_ != end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    if constexpr (kBuild) path_.emplace_back(std::size_t{0});
    while (true) {
      if constexpr (kBuild) {
        auto& list = elements->get_ref<json::array_t&>();
        path_.back() = list.size();
        list.emplace_back();
        if (!value(list.back(), depth)) return false;
      } else {
        if (!value(out, depth)) return false;
      }
      skip_whitespace();
      if (p_ == end_) return truncated("an array");
      if (*p_ == ']') break;
      if (*p_ != ',') return fail(p_, "expected ',' or ']' after an array element but found " + found());
      ++p_;
      skip_whitespace();
      if (p_ != end_ && *p_ == ']') return fail(p_, "a trailing comma before ']' is not allowed in JSON; remove it");
    }
    ++p_;  // ']'
    if constexpr (kBuild) path_.pop_back();
    return true;
  }

  bool object(json& out, std::size_t depth) {
    ++p_;  // '{'
    skip_whitespace();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      if constexpr (kBuild) out = json::object();
      return true;
    }
    if constexpr (kBuild) path_.emplace_back(static_cast<const std::string*>(nullptr));
    bool after_comma = false;
    while (true) {
      skip_whitespace();
      if (p_ == end_) return truncated("an object");
      if (*p_ != '"') {
        if (after_comma && *p_ == '}') return fail(p_, "a trailing comma before '}' is not allowed in JSON; remove it");
        return fail(p_, "expected a key in double quotes but found " + found());
      }
      std::string key;
      if (!string(kBuild ? &key : nullptr)) return false;
      skip_whitespace();
      if (p_ == end_) return truncated("an object");
      if (*p_ != ':') return fail(p_, "expected ':' after the key but found " + found());
      ++p_;
      if constexpr (kBuild) {
        path_.back() = &key;
        json member;
        if (!value(member, depth)) return false;
        // Members collect in a vector reused by every object at this depth, then move into the
        // ordered_map at its final size: one allocation per object, no key copied.
        scratch_[depth - 1].emplace_back(std::move(key), std::move(member));
      } else {
        if (!value(out, depth)) return false;
      }
      skip_whitespace();
      if (p_ == end_) return truncated("an object");
      if (*p_ == '}') break;
      if (*p_ != ',') return fail(p_, "expected ',' or '}' after an object member but found " + found());
      ++p_;
      after_comma = true;
    }
    ++p_;  // '}'
    if constexpr (kBuild) {
      path_.pop_back();
      auto& members = scratch_[depth - 1];
      const std::vector<bool> duplicate = find_duplicate_keys(members);
      out = json::object();
      auto& map = out.get_ref<json::object_t&>();
      map.reserve(members.size());
      for (std::size_t i = 0; i < members.size(); ++i) {
        // The vector's emplace_back: ordered_map's would search all keys again.
        if (duplicate.empty() || !duplicate[i]) map.emplace_back(std::move(members[i].first), std::move(members[i].second));
      }
      members.clear();
    }
    return true;
  }

  // Marks every repeat of an earlier key (an empty result: none), and records each as a finding
  // at the object's path.
  std::vector<bool> find_duplicate_keys(const std::vector<std::pair<std::string, json>>& members) {
    std::vector<bool> duplicate;  // stays empty (no allocation) when there is no duplicate
    for (const std::size_t i : repeated_key_positions(members)) {
      if (duplicate.empty()) duplicate.assign(members.size(), false);
      duplicate[i] = true;
      if (document_.duplicate_key_count++ < kMaxFindings) {
        document_.duplicate_keys.push_back({current_path(), members[i].first});
      }
    }
    return duplicate;
  }

  // ---- scalars ----
  // Appends the decoded text to `out` unless it is null.
  bool string(std::string* out) {
    const char* open = p_++;
    const char* run = p_;
    while (true) {
      while (p_ != end_ && kPlainStringByte[static_cast<unsigned char>(*p_)]) ++p_;
      if (p_ == end_) return fail(open, "this string has no closing '\"' (the file ends inside it)");
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        if (out) out->append(run, p_);
        ++p_;
        return true;
      }
      if (c == '\\') {
        if (out) out->append(run, p_);
        if (!escape(out)) return false;
        run = p_;
        continue;
      }
      if (c < 0x20) {
        static const char* kHex = "0123456789ABCDEF";
        return fail(p_, std::string("control character U+00") + kHex[c >> 4] + kHex[c & 15] +
                            " must be escaped inside a string (e.g. \\n, \\t)");
      }
      const std::size_t length = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p_),
                                                      reinterpret_cast<const unsigned char*>(end_));
      if (length == 0) return fail(p_, "invalid UTF-8 (" + found() + ") in a string; save the file as UTF-8");
      p_ += length;
    }
  }

  bool escape(std::string* out) {
    const char* at = p_++;  // '\'
    if (p_ == end_) return fail(at, "this string has no closing '\"' (the file ends inside it)");
    char decoded = 0;
    switch (*p_++) {
      case '"': decoded = '"'; break;
      case '\\': decoded = '\\'; break;
      case '/': decoded = '/'; break;
      case 'b': decoded = '\b'; break;
      case 'f': decoded = '\f'; break;
      case 'n': decoded = '\n'; break;
      case 'r': decoded = '\r'; break;
      case 't': decoded = '\t'; break;
      case 'u': break;
      default:
        return fail(at, "invalid escape in a string; valid ones are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX");
    }
    if (decoded != 0) {
      if (out) *out += decoded;
      return true;
    }
    std::uint32_t unit = 0;
    if (!hex4(at, unit)) return false;
    if (unit >= 0xDC00 && unit <= 0xDFFF) {
      return fail(at, "\\u escape with a lone low surrogate; surrogates must come in high/low pairs");
    }
    if (unit >= 0xD800 && unit <= 0xDBFF) {
      std::uint32_t low = 0;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u' || (p_ += 2, !hex4(at, low)) || low < 0xDC00 || low > 0xDFFF) {
        return fail(at, "\\u escape with a lone high surrogate; surrogates must come in high/low pairs");
      }
      unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    }
    if (out) append_utf8(unit, *out);
    return true;
  }

  bool hex4(const char* escape_start, std::uint32_t& unit) {
    if (end_ - p_ < 4) return fail(escape_start, "\\u must be followed by 4 hex digits");
    for (int i = 0; i < 4; ++i) {
      const int digit = hex_value(*p_++);
      if (digit < 0) return fail(escape_start, "\\u must be followed by 4 hex digits");
      unit = unit * 16 + static_cast<std::uint32_t>(digit);
    }
    return true;
  }

  bool number(json& out) {
    const char* start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || !is_digit(*p_)) return fail(p_, "expected a digit after '-'");
    if (*p_ == '0') {
      ++p_;
      if (p_ != end_ && is_digit(*p_)) return fail(start, "numbers must not have leading zeros");
    } else {
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    bool integral = true;
    if (p_ != end_ && *p_ == '.') {
      integral = false;
      ++p_;
      if (p_ == end_ || !is_digit(*p_)) return fail(p_, "expected a digit after the decimal point");
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      integral = false;
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !is_digit(*p_)) return fail(p_, "expected a digit in the exponent");
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    if constexpr (!kBuild) return true;
    if (integral) {
      // Like nlohmann: integers that fit stay integers; larger ones become doubles.
      if (negative) {
        std::int64_t value = 0;
        if (std::from_chars(start, p_, value).ec == std::errc()) {
          out = value;
          return true;
        }
      } else {
        std::uint64_t value = 0;
        if (std::from_chars(start, p_, value).ec == std::errc()) {
          if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            out = static_cast<std::int64_t>(value);
          } else {
            out = value;
          }
          return true;
        }
      }
    }
    double value = 0;
    if (std::from_chars(start, p_, value).ec != std::errc()) {
      // Out of range: strtod gives the conventional result (infinity, or 0 / a subnormal).
      value = std::strtod(std::string(start, p_).c_str(), nullptr);
    }
    if (!std::isfinite(value) && document_.non_finite_count++ < kMaxFindings) {
      document_.non_finite_numbers.push_back({current_path(), std::string(start, p_)});
    }
    out = value;
    return true;
  }

  JsonPath current_path() const {
    JsonPath path;
    path.reserve(path_.size());
    for (const auto& step : path_) {
      if (const auto* key = std::get_if<const std::string*>(&step)) path.emplace_back(**key);
      else path.emplace_back(std::get<std::size_t>(step));
    }
    return path;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  std::size_t max_depth_;
  JsonDocument& document_;
  // Where the value being parsed sits; keys point at object()'s local variables.
  std::vector<std::variant<const std::string*, std::size_t>> path_;
  std::vector<std::vector<std::pair<std::string, json>>> scratch_;  // per depth, see object()
};

}  // namespace

std::variant<JsonDocument, JsonSyntaxError> parse_json(std::string_view text, std::size_t max_depth) {
  JsonDocument document;
  Parser<false> check(text, max_depth, document);
  if (!check.parse()) return check.error;
  Parser<true> build(text, max_depth, document);
  if (!build.parse()) return build.error;  // not expected: the same grammar passed above
  return document;
}

}  // namespace nimble::trace::detail
