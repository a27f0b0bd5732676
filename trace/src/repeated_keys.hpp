// Finding keys that occur twice in one JSON object while parsing it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

// Positions (ascending) of members whose key repeats an earlier member's key.
std::vector<std::size_t> repeated_key_positions(const std::vector<std::pair<std::string, json>>& members);

}  // namespace nimble::trace::detail
