#include "json_pretty.hpp"

#include "json_text.hpp"

#include "nimble/trace/io.hpp"

namespace nimble::trace::detail {
namespace {

void write_scalar(const json& value, std::string& out) { append_json_scalar(value, out); }

// Appends the one-line form; stops early and returns false once `out` grows past `limit`, so a
// huge container costs no more than a line's worth of work per attempt.
bool write_one_line(const json& value, std::string& out, std::size_t limit) {
  if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& element : value) {
      if (!first) out += ", ";
      first = false;
      if (!write_one_line(element, out, limit)) return false;
    }
    out += ']';
  } else if (value.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, member] : value.get_ref<const json::object_t&>()) {
      if (!first) out += ", ";
      first = false;
      write_string(key, out);
      out += ": ";
      if (out.size() > limit || !write_one_line(member, out, limit)) return false;
    }
    out += '}';
  } else if (value.is_string() && out.size() + value.get_ref<const std::string&>().size() > limit) {
    return false;  // do not copy a long string only to throw it away
  } else {
    write_scalar(value, out);
  }
  return out.size() <= limit;
}

bool is_flat(const json& container) {
  for (const auto& element : container) {
    if (element.is_array() || element.is_object()) return false;
  }
  return true;
}

void newline(std::size_t indent, std::string& out) {
  out += '\n';
  out.append(indent, ' ');
}

}  // namespace

void write_string(const std::string& text, std::string& out) { append_json_string(text, out); }

void write_pretty(const json& value, std::size_t indent, std::size_t column, bool allow_one_line,
                  std::string& out) {
  const bool container = value.is_array() || value.is_object();
  if (!container || value.empty()) {
    write_scalar(value, out);
    return;
  }
  if (allow_one_line) {
    const std::size_t start = out.size();
    // One character is kept for a following comma.
    const std::size_t width = is_flat(value) ? kFlatLineWidth : kLineWidth;
    const std::size_t room = width > column + 1 ? width - column - 1 : 0;
    if (write_one_line(value, out, start + room)) return;
    out.resize(start);
  }
  const std::size_t inner = indent + 2;
  if (value.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& element : value) {
      if (!first) out += ',';
      first = false;
      newline(inner, out);
      write_pretty(element, inner, inner, true, out);
    }
    newline(indent, out);
    out += ']';
    return;
  }
  out += '{';
  bool first = true;
  for (const auto& [key, member] : value.get_ref<const json::object_t&>()) {
    if (!first) out += ',';
    first = false;
    newline(inner, out);
    const std::size_t key_start = out.size();
    write_string(key, out);
    out += ": ";
    write_pretty(member, inner, inner + (out.size() - key_start), true, out);
  }
  newline(indent, out);
  out += '}';
}

}  // namespace nimble::trace::detail

namespace nimble::trace {

std::string pretty_json(const json& value) {
  std::string out;
  detail::write_pretty(value, 0, 0, true, out);
  return out;
}

}  // namespace nimble::trace
