#include "nimble/export/names.hpp"

#include <cxxabi.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

namespace nimble::exporter {
namespace {

bool is_open(char c) { return c == '<' || c == '(' || c == '{' || c == '['; }
bool is_close(char c) { return c == '>' || c == ')' || c == '}' || c == ']'; }

// Bracket depth before each character: <>, (), {}, [] all count; never below zero, so stray
// closers ("operator>", "->") cannot make the rest of the name look nested.
std::vector<int> depths(std::string_view s) {
  std::vector<int> before(s.size() + 1, 0);
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    before[i] = depth;
    if (is_open(s[i])) {
      ++depth;
    } else if (is_close(s[i]) && depth > 0) {
      --depth;
    }
  }
  before[s.size()] = depth;
  return before;
}

// Spaces for control characters, runs of spaces collapsed, ends trimmed.
std::string clean(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    const char mapped = (u < 0x20 || u == 0x7f) ? ' ' : c;
    if (mapped == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(mapped);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Index of the bracket that closes the one opened at `open`, or npos.
std::size_t matching_close(std::string_view s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (is_open(s[i])) {
      ++depth;
    } else if (is_close(s[i])) {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

// Drops the function's parameter list (the last top-level "(...)" that is not a scope such as
// "(anonymous namespace)::") and everything after it (" const", " [clone .kd]").
std::string_view strip_parameters(std::string_view s) {
  const std::vector<int> depth = depths(s);
  std::size_t cut = std::string_view::npos;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '(' || depth[i] != 0 || i == 0) continue;
    const std::size_t close = matching_close(s, i);
    if (close == std::string_view::npos) break;
    if (s.substr(close + 1, 2) == "::") continue;  // "(anonymous namespace)::"
    cut = i;
  }
  return cut == std::string_view::npos ? s : s.substr(0, cut);
}

// Drops a return type: everything up to the last space outside brackets.
std::string_view strip_return_type(std::string_view s) {
  const std::vector<int> depth = depths(s);
  for (std::size_t i = s.size(); i-- > 0;) {
    if (s[i] == ' ' && depth[i] == 0 && i + 1 < s.size()) return s.substr(i + 1);
  }
  return s;
}

// Drops namespaces and enclosing classes: what follows the last "::" outside brackets.
std::string_view strip_scopes(std::string_view s) {
  const std::vector<int> depth = depths(s);
  for (std::size_t i = s.size(); i-- > 1;) {
    if (s[i] == ':' && s[i - 1] == ':' && depth[i - 1] == 0 && i + 1 < s.size()) return s.substr(i + 1);
  }
  return s;
}

// Template argument lists longer than `keep` characters, or nested, become "<...>".
std::string trim_templates(std::string_view s, std::size_t keep) {
  const std::vector<int> depth = depths(s);
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && depth[i] == 0 && i > 0) {
      const std::size_t close = matching_close(s, i);
      if (close != std::string_view::npos) {
        const std::string_view inner = s.substr(i + 1, close - i - 1);
        const bool nested = inner.find_first_of("<({[") != std::string_view::npos;
        if (nested || inner.size() > keep) {
          out += "<...>";
        } else {
          out.append(s.substr(i, close - i + 1));
        }
        i = close;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Keeps about two thirds of the room for the beginning, the rest for the end.
std::string cap_length(const std::string& s, std::size_t max_length) {
  if (s.size() <= max_length) return s;
  constexpr std::string_view kEllipsis = "...";
  if (max_length <= kEllipsis.size() + 2) {
    std::size_t end = std::min(max_length, s.size());
    while (end > 0 && end < s.size() && continuation_byte(s[end])) --end;
    return s.substr(0, end);
  }
  const std::size_t room = max_length - kEllipsis.size();
  std::size_t head = room * 2 / 3;
  std::size_t tail_start = s.size() - (room - head);
  while (head > 0 && continuation_byte(s[head])) --head;
  while (tail_start < s.size() && continuation_byte(s[tail_start])) ++tail_start;
  return s.substr(0, head) + std::string(kEllipsis) + s.substr(tail_start);
}

std::string demangle(const std::string& symbol) {
  if (symbol.rfind("_Z", 0) != 0) return symbol;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

std::string string_field(const trace::json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string shorten_kernel_name(std::string_view name, std::size_t max_length) {
  const std::string cleaned = clean(name);
  if (cleaned.empty()) return cleaned;
  std::string_view s = cleaned;
  const std::string_view without_parameters = strip_parameters(s);
  // Only a function signature has a return type in front; other names keep their spaces.
  if (without_parameters.size() != s.size()) s = strip_return_type(without_parameters);
  s = strip_scopes(s);
  constexpr std::size_t kKeepArguments = 24;
  std::string shortened = trim_templates(s, kKeepArguments);
  // Still too long: the base name matters more than short template arguments.
  if (shortened.size() > max_length) shortened = trim_templates(s, 0);
  if (shortened.empty()) shortened = cleaned;
  // Cut the base name rather than the "<...>" that ends it: "CatArrayBatch...contig<...>".
  constexpr std::string_view kTemplates = "<...>";
  if (shortened.size() > max_length && shortened.size() > kTemplates.size() &&
      shortened.ends_with(kTemplates) && max_length >= 2 * kTemplates.size() + 6) {
    const std::string base = shortened.substr(0, shortened.size() - kTemplates.size());
    return cap_length(base, max_length - kTemplates.size()) + std::string(kTemplates);
  }
  return cap_length(shortened, max_length);
}

std::string full_task_name(const trace::Task& task) {
  const std::string name = string_field(task.extra, "name");
  if (!clean(name).empty()) return name;
  const std::string mangled = string_field(task.extra, "mangled");
  if (!clean(mangled).empty()) return demangle(mangled);
  return {};
}

std::string display_name(const trace::Task& task, std::size_t max_length, bool with_id) {
  const std::string full = full_task_name(task);
  if (!full.empty()) return shorten_kernel_name(full, max_length);
  std::string detail;
  if (task.extra.contains("copy")) detail = string_field(task.extra["copy"], "direction");
  if (detail.empty()) detail = string_field(task.extra, "sync");
  std::string out = clean(task.kind);
  if (!detail.empty()) out += " " + clean(detail);
  if (with_id) out += " #" + std::to_string(task.id);
  return cap_length(out, std::max<std::size_t>(max_length, 24));
}

std::int64_t to_ns(double us) {
  if (!std::isfinite(us) || us <= 0) return 0;
  const double ns = std::round(us * 1000.0);
  constexpr double kMax = 9.0e18;
  return ns >= kMax ? static_cast<std::int64_t>(kMax) : static_cast<std::int64_t>(ns);
}

std::string format_us(double us) {
  const double rounded = static_cast<double>(to_ns(us)) / 1000.0;
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, rounded);
  return std::string(buffer, result.ptr);
}

}  // namespace nimble::exporter
