#include "json_syntax.hpp"

#include "text_position.hpp"

namespace nimble::trace::detail {
namespace {

bool starts_with_bytes(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool only_whitespace(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

std::optional<JsonDocument> parse_json_document(std::string_view text, std::size_t max_depth, Diagnostics& out) {
  // RFC 8259 forbids writing a byte order mark, and other tools reading the file may choke on it,
  // so say so instead of skipping it silently.
  if (starts_with_bytes(text, "\xEF\xBB\xBF")) {
    out.error(at_position(1, 1),
              "the file starts with a UTF-8 byte order mark (BOM), which JSON does not allow; "
              "save it as UTF-8 without BOM");
    return std::nullopt;
  }
  if (starts_with_bytes(text, "\xFE\xFF") || starts_with_bytes(text, "\xFF\xFE")) {
    out.error(at_position(1, 1), "the file is UTF-16 encoded; save it as UTF-8");
    return std::nullopt;
  }
  if (only_whitespace(text)) {
    out.error(at_file(),
              "the file is empty; a trace is a JSON object such as "
              "{\"format\": \"nimble-trace\", \"version\": 1, \"tasks\": []}");
    return std::nullopt;
  }
  auto parsed = parse_json(text, max_depth);
  if (auto* error = std::get_if<JsonSyntaxError>(&parsed)) {
    const TextPosition position = position_of(text, error->offset);
    out.error(at_position(position.line, position.column), error->message);
    return std::nullopt;
  }
  return std::move(std::get<JsonDocument>(parsed));
}

}  // namespace nimble::trace::detail
