#include "text_position.hpp"

#include <algorithm>

namespace nimble::trace::detail {

TextPosition position_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  TextPosition position;
  position.line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  // Count characters, not bytes: UTF-8 continuation bytes (10xxxxxx) do not start one.
  std::size_t column = 1;
  for (std::size_t i = line_start; i < offset; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
  }
  position.column = column;
  return position;
}

}  // namespace nimble::trace::detail
