#include "nimble/replayer/shadow_layout.hpp"

#include <algorithm>
#include <numeric>

namespace nimble::replayer {
namespace {

constexpr std::uint64_t kAlign = 256;
std::uint64_t aligned(std::uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Bitsets of ops, one word per 64.
struct Bits {
  std::size_t words;
  std::vector<std::uint64_t> data;
  Bits(std::size_t rows, std::size_t bits) : words((bits + 63) / 64), data(rows * words, 0) {}
  std::uint64_t* row(std::size_t r) { return data.data() + r * words; }
  static bool test(const std::uint64_t* row, std::size_t bit) { return (row[bit / 64] >> (bit % 64)) & 1; }
  static void set(std::uint64_t* row, std::size_t bit) { row[bit / 64] |= std::uint64_t{1} << (bit % 64); }
};

}  // namespace

ShadowLayout layout_shadows(const std::vector<ShadowUse>& shadows,
                            const std::vector<std::vector<std::size_t>>& predecessors, std::size_t max_ops) {
  ShadowLayout layout;
  layout.offsets.assign(shadows.size(), 0);
  const std::size_t n = predecessors.size();
  const bool share = n > 0 && n <= max_ops;

  // Strict descendants of every op, from the last op back (issue order is topological).
  Bits below(share ? n : 0, n);
  if (share) {
    for (std::size_t i = n; i-- > 0;) {
      for (std::size_t p : predecessors[i]) {
        if (p >= i) continue;  // not a DAG in issue order: leave it to the checks elsewhere
        std::uint64_t* to = below.row(p);
        const std::uint64_t* from = below.row(i);
        for (std::size_t w = 0; w < below.words; ++w) to[w] |= from[w];
        Bits::set(to, i);
      }
    }
  }

  struct Slot {
    std::uint64_t offset, size;
    std::vector<std::uint64_t> after;  // ops after every use of the current occupant
    bool open;                         // the occupant may be followed by another shadow
  };
  std::vector<Slot> slots;
  std::vector<std::size_t> order(shadows.size());
  std::iota(order.begin(), order.end(), 0);
  auto first_use = [&](std::size_t s) { return shadows[s].ops.empty() ? n : shadows[s].ops.front(); };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return first_use(a) < first_use(b); });

  for (std::size_t s : order) {
    const ShadowUse& use = shadows[s];
    const bool can_share = share && use.shareable && !use.ops.empty();
    Slot* best = nullptr;
    if (can_share) {
      for (Slot& slot : slots) {
        if (!slot.open || slot.size < use.size || (best && slot.size >= best->size)) continue;
        const bool ordered = std::all_of(use.ops.begin(), use.ops.end(),
                                         [&](std::size_t op) { return op < n && Bits::test(slot.after.data(), op); });
        if (ordered) best = &slot;
      }
    }
    if (best) {
      ++layout.reused;
    } else {
      slots.push_back({layout.bytes, aligned(std::max<std::uint64_t>(use.size, 1)), {}, false});
      layout.bytes += slots.back().size;
      best = &slots.back();
    }
    layout.offsets[s] = best->offset;
    best->open = can_share;
    if (can_share) {
      // After every use of this shadow: the intersection of its uses' descendants.
      best->after.assign(below.row(use.ops.front()), below.row(use.ops.front()) + below.words);
      for (std::size_t op : use.ops) {
        const std::uint64_t* d = below.row(op);
        for (std::size_t w = 0; w < below.words; ++w) best->after[w] &= d[w];
      }
    }
  }
  return layout;
}

}  // namespace nimble::replayer
