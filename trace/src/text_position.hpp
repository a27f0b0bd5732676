// Byte offsets (what nlohmann reports) to the line and column an editor shows.
#pragma once

#include <cstddef>
#include <string_view>

namespace nimble::trace::detail {

struct TextPosition {
  std::size_t line = 1;    // 1-based
  std::size_t column = 1;  // 1-based, counted in UTF-8 characters, not bytes
};

// `offset` is a 0-based byte index into `text`; offsets past the end name the end of the text.
TextPosition position_of(std::string_view text, std::size_t offset);

}  // namespace nimble::trace::detail
