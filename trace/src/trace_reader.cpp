// parse_trace / load_trace: text -> JSON -> typed trace -> validation, every problem collected.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>

#include "json_checks.hpp"
#include "json_syntax.hpp"
#include "nimble/trace/io.hpp"
#include "nimble/trace/validate.hpp"
#include "trace_from_json.hpp"

namespace nimble::trace {
namespace {

// duration_us is checked by validate_tasks, with a more specific message.
bool validated_number_field(const detail::JsonPath& path) {
  if (path.size() != 3 || !std::holds_alternative<std::string>(path[0]) ||
      std::get<std::string>(path[0]) != "tasks" || !std::holds_alternative<std::string>(path[2])) {
    return false;
  }
  const std::string& field = std::get<std::string>(path[2]);
  return field == "duration_us";
}

void report_parse_findings(const detail::JsonDocument& document, Diagnostics& out) {
  for (const auto& duplicate : document.duplicate_keys) {
    out.error(detail::location_of(document.root, duplicate.object_path, duplicate.key),
              "key " + detail::quoted(duplicate.key) +
                  " appears more than once in the same object; tools disagree on which one counts, "
                  "so remove all but one");
  }
  if (document.duplicate_key_count > document.duplicate_keys.size()) {
    out.error(at_file(), std::to_string(document.duplicate_key_count - document.duplicate_keys.size()) +
                             " more duplicate keys not listed");
  }
  for (const auto& number : document.non_finite_numbers) {
    if (validated_number_field(number.path)) continue;
    out.error(detail::location_of(document.root, number.path),
              "the number " + detail::quoted(number.text) + " is too large to represent; use a smaller value");
  }
}

// Chunked reads: fast for large files, and works for pipes whose size is unknown.
bool read_all(std::istream& in, std::string& text) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::size_t used = text.size();
  while (in) {
    text.resize(used + kChunk);
    in.read(text.data() + used, static_cast<std::streamsize>(kChunk));
    used += static_cast<std::size_t>(in.gcount());
    if (used > kMaxTraceBytes) break;  // parse_trace reports the size
  }
  text.resize(used);
  return !in.bad();
}

}  // namespace

LoadResult parse_trace(const std::string& text) {
  LoadResult result;
  Diagnostics& out = result.diagnostics;
  try {
    if (text.size() > kMaxTraceBytes) {
      out.error(at_file(), "the trace is " + std::to_string(text.size()) + " bytes; nimble reads traces of up to " +
                               std::to_string(kMaxTraceBytes) + " bytes");
      return result;
    }
    auto document = detail::parse_json_document(text, kMaxNestingDepth, out);
    if (!document) return result;
    report_parse_findings(*document, out);
    auto trace = detail::trace_from_json(std::move(document->root), out);
    if (!trace) return result;
    out.append(validate_trace(*trace));
    if (!out.has_errors()) result.trace = std::move(trace);
  } catch (const std::bad_alloc&) {
    result.trace.reset();
    out.error(at_file(), "out of memory while reading the trace");
  } catch (const std::exception& error) {
    // Not expected: every check above reports instead of throwing. Never let bad input crash a tool.
    result.trace.reset();
    out.error(at_file(), std::string("internal error while reading the trace: ") + error.what());
  }
  return result;
}

LoadResult load_trace(const std::string& path) {
  LoadResult result;
  std::string text;
  if (path == "-") {
    if (!read_all(std::cin, text)) {
      result.diagnostics.error(at_file(), "cannot read standard input");
      return result;
    }
    return parse_trace(text);
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    result.diagnostics.error(at_file(), "is a directory, not a trace file");
    return result;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    result.diagnostics.error(at_file(), std::string("cannot open the file: ") + std::strerror(errno));
    return result;
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxTraceBytes) {
    result.diagnostics.error(at_file(), "the file is " + std::to_string(size) + " bytes; nimble reads traces of up to " +
                                            std::to_string(kMaxTraceBytes) + " bytes");
    return result;
  }
  if (!ec) text.reserve(size);
  if (!read_all(file, text)) {
    result.diagnostics.error(at_file(), std::string("cannot read the file: ") + std::strerror(errno));
    return result;
  }
  return parse_trace(text);
}

}  // namespace nimble::trace
