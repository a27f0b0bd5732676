#include "repeated_keys.hpp"

#include <cstdint>
#include <functional>
#include <string_view>

namespace nimble::trace::detail {
namespace {

// Objects up to this size are checked pairwise: cheaper than hashing for the usual handful.
constexpr std::size_t kPairwiseLimit = 32;

}  // namespace

std::vector<std::size_t> repeated_key_positions(const std::vector<std::pair<std::string, json>>& members) {
  std::vector<std::size_t> repeats;
  if (members.size() <= kPairwiseLimit) {
    for (std::size_t i = 1; i < members.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (members[i].first == members[j].first) {
          repeats.push_back(i);
          break;
        }
      }
    }
    return repeats;
  }
  // Open addressing on (hash, index): a 5-million-key object is checked in a fraction of a
  // second, where std::unordered_set spends seconds allocating nodes.
  std::size_t capacity = 64;
  while (capacity < 2 * members.size()) capacity *= 2;
  std::vector<std::uint64_t> slots(capacity, 0);  // high 32 bits: hash; low 32: index + 1
  const std::hash<std::string_view> hasher;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::uint64_t hash = hasher(members[i].first);
    const std::uint64_t tag = hash >> 32 << 32;
    for (std::size_t slot = hash & (capacity - 1);; slot = (slot + 1) & (capacity - 1)) {
      if (slots[slot] == 0) {
        slots[slot] = tag | (i + 1);
        break;
      }
      if ((slots[slot] >> 32 << 32) == tag && members[(slots[slot] & 0xFFFFFFFFu) - 1].first == members[i].first) {
        repeats.push_back(i);
        break;
      }
    }
  }
  return repeats;
}

}  // namespace nimble::trace::detail
