#include "settings/settings.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

namespace nimble::settings {
namespace {

// A count is an int: larger ones are refused with the cap named, never wrapped around to a small one.
constexpr long long kLargestCount = std::numeric_limits<int>::max();

// The digits' value, capped just past kLargestCount; nullopt when `text` is not all digits.
std::optional<long long> digits_value(std::string_view text) {
  if (text.empty()) return std::nullopt;
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = std::min(value * 10 + (c - '0'), kLargestCount + 1);
  }
  return value;
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// Each name a Choice accepts, in the list's order, with the one it is shown as: "a|b, c" gives
// {a, a}, {b, a}, {c, c}.
struct ChoiceName {
  std::string_view name, shown;
};
std::vector<ChoiceName> choice_names(const Setting& setting) {
  std::vector<ChoiceName> names;
  std::string_view rest = setting.choices;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(", ");
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
    const std::string_view shown = item.substr(0, item.find('|'));
    while (!item.empty()) {
      const std::size_t bar = item.find('|');
      names.push_back({item.substr(0, bar), shown});
      item = bar == std::string_view::npos ? std::string_view() : item.substr(bar + 1);
    }
  }
  return names;
}

std::string refused(const Setting& setting, std::string_view text, const std::string& what) {
  return std::string(setting.variable) + "=" + std::string(text) + " is not " + what;
}

}  // namespace

const Setting* find(std::string_view variable) {
  for (const Setting& setting : all) {
    if (variable == setting.variable) return &setting;
  }
  return nullptr;
}

std::string parse(const Setting& setting, std::string_view text, bool& out) {
  if (text.empty()) return "";
  if (text == "0" || (setting.kind == Kind::Flag && text == "1") || setting.kind == Kind::Switch) {
    out = text != "0";
    return "";
  }
  return refused(setting, text, accepted(setting));
}

std::string parse(const Setting& setting, std::string_view text, int& out) {
  if (text.empty()) return "";
  if (setting.zero && text == "0") {
    out = 0;
    return "";
  }
  const std::optional<long long> value = digits_value(text);
  if (value && *value >= 1 && *value <= kLargestCount && (setting.max == 0 || *value <= setting.max)) {
    out = static_cast<int>(*value);
    return "";
  }
  std::string words = accepted(setting);
  if (value && *value > kLargestCount && setting.max == 0) words += ", at most " + std::to_string(kLargestCount);
  return refused(setting, text, *setting.unit ? "a number of " + std::string(setting.unit) + " (" + words + ")" : words);
}

std::string parse(const Setting& setting, std::string_view text, double& out) {
  if (text.empty()) return "";
  const std::string value_text(text);
  char* end = nullptr;
  const double value = std::strtod(value_text.c_str(), &end);
  if (end != value_text.c_str() && *end == '\0' && value >= setting.low && value <= setting.high) {
    out = value;
    return "";
  }
  return refused(setting, text, "a ratio (" + accepted(setting) + ", e.g. 1.0)");
}

std::string parse(const Setting& setting, std::string_view text, std::string& out) {
  if (text.empty()) return "";
  if (setting.kind == Kind::Choice && !is_choice(setting, text)) return refused(setting, text, accepted(setting));
  out = std::string(text);
  return "";
}

std::string accepted(const Setting& setting) {
  switch (setting.kind) {
    case Kind::Switch: return "0 turns it off, anything else on";
    case Kind::Flag: return "0 or 1";
    case Kind::Count: {
      std::string words = "a positive integer";
      if (setting.max) words += ", at most " + std::to_string(setting.max);
      if (setting.zero) words += std::string(", or 0") + (*setting.zero ? std::string(" for ") + setting.zero : "");
      return words;
    }
    case Kind::Ratio: return "a number from " + number_text(setting.low) + " to " + number_text(setting.high);
    case Kind::Choice: {
      std::string words;
      for (const std::string& name : choices(setting)) words += (words.empty() ? "one of " : ", ") + name;
      return words;
    }
    case Kind::Text:
    case Kind::ByHand: return "";
  }
  return "";
}

std::vector<std::string> choices(const Setting& setting) {
  std::vector<std::string> shown;
  for (const ChoiceName& c : choice_names(setting)) {
    if (c.name == c.shown) shown.emplace_back(c.name);
  }
  return shown;
}

bool is_choice(const Setting& setting, std::string_view text) {
  for (const ChoiceName& c : choice_names(setting)) {
    // "nvtx:NAME": the prefix and any name after it.
    const std::size_t colon = c.name.find(':');
    if (colon != std::string_view::npos ? text.size() > colon + 1 && text.substr(0, colon + 1) == c.name.substr(0, colon + 1)
                                        : text == c.name) {
      return true;
    }
  }
  return false;
}

std::string assignment(const Setting& setting, std::string_view value) {
  return std::string(setting.variable) + "=" + std::string(value);
}

std::string assignment(const Setting& setting) { return assignment(setting, setting.default_text); }

}  // namespace nimble::settings
