// layout_shadows: shadows share memory only where the dependency graph orders every use of one
// before every use of the other.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "nimble/replayer/shadow_layout.hpp"

namespace nimble::replayer {
namespace {

using Preds = std::vector<std::vector<std::size_t>>;
using Offsets = std::vector<std::uint64_t>;

ShadowUse use(std::uint64_t size, std::vector<std::size_t> ops, bool shareable = true) {
  return {size, std::move(ops), shareable};
}

// 0 -> 1 -> 2 -> 3
const Preds kChain = {{}, {0}, {1}, {2}};
// 0 -> 1, 0 -> 2, {1, 2} -> 3: ops 1 and 2 may run at the same time
const Preds kDiamond = {{}, {0}, {0}, {1, 2}};

TEST(ShadowLayout, OrderedShadowsShareOneSlot) {
  const ShadowLayout l = layout_shadows({use(1000, {0, 1}), use(1000, {2, 3})}, kChain);
  EXPECT_EQ(l.offsets, (Offsets{0, 0}));
  EXPECT_EQ(l.bytes, 1024u);  // 256-aligned
  EXPECT_EQ(l.reused, 1u);
}

TEST(ShadowLayout, ShadowsOfConcurrentOpsGetTheirOwnSlots) {
  const ShadowLayout l = layout_shadows({use(512, {1}), use(512, {2})}, kDiamond);
  EXPECT_EQ(l.offsets, (Offsets{0, 512}));
  EXPECT_EQ(l.bytes, 1024u);
  EXPECT_EQ(l.reused, 0u);
  // After the join both slots are free again.
  const ShadowLayout joined = layout_shadows({use(512, {1}), use(512, {2}), use(512, {3})}, kDiamond);
  EXPECT_EQ(joined.bytes, 1024u);
  EXPECT_EQ(joined.reused, 1u);
}

TEST(ShadowLayout, EveryUseMustComeAfterEveryEarlierUse) {
  // Shadow 0 is used by ops 1 and 2 (concurrent); shadow 1 by op 2 and 3: op 2 uses both.
  const ShadowLayout l = layout_shadows({use(256, {1, 2}), use(256, {2, 3})}, kDiamond);
  EXPECT_NE(l.offsets[0], l.offsets[1]);
  // Shadow 1 used by op 3 only: after both uses of shadow 0.
  EXPECT_EQ(layout_shadows({use(256, {1, 2}), use(256, {3})}, kDiamond).offsets, (Offsets{0, 0}));
  // Shadow 1 used by op 1 and op 3: op 1 is not after op 2 (shadow 0's use).
  const ShadowLayout partly = layout_shadows({use(256, {2}), use(256, {1, 3})}, kDiamond);
  EXPECT_NE(partly.offsets[0], partly.offsets[1]);
}

TEST(ShadowLayout, ALargerShadowDoesNotFitASmallerSlot) {
  const ShadowLayout l = layout_shadows({use(256, {0}), use(4096, {2})}, kChain);
  EXPECT_EQ(l.offsets, (Offsets{0, 256}));
  EXPECT_EQ(l.bytes, 256u + 4096u);
}

TEST(ShadowLayout, BestFittingSlotIsChosen) {
  // Shadows 0 (4096) and 1 (512) on concurrent ops 1 and 2, then a 300-byte shadow after the join.
  const ShadowLayout l = layout_shadows({use(4096, {1}), use(512, {2}), use(300, {3})}, kDiamond);
  EXPECT_EQ(l.offsets[2], l.offsets[1]);
}

TEST(ShadowLayout, ASlotPassesOnOnlyAfterItsLatestOccupant) {
  // 0 -> 1 -> 2 -> 3: shadows on ops 0, 1 and 3 all share; each after the one before.
  const ShadowLayout l = layout_shadows({use(256, {0}), use(256, {1}), use(256, {3})}, kChain);
  EXPECT_EQ(l.offsets, (Offsets{0, 0, 0}));
  EXPECT_EQ(l.reused, 2u);
}

TEST(ShadowLayout, ShadowsOfAllocationsFromBeforeTheIterationAreNeverShared) {
  // Its contents at the start of the iteration could matter: it neither joins nor hands on a slot.
  EXPECT_EQ(layout_shadows({use(256, {0}, false), use(256, {2})}, kChain).offsets, (Offsets{0, 256}));
  EXPECT_EQ(layout_shadows({use(256, {0}), use(256, {2}, false)}, kChain).offsets, (Offsets{0, 256}));
}

TEST(ShadowLayout, TooManyOpsMeansNoSharing) {
  const ShadowLayout l = layout_shadows({use(256, {0}), use(256, {3})}, kChain, /*max_ops=*/3);
  EXPECT_EQ(l.offsets, (Offsets{0, 256}));
  EXPECT_EQ(l.reused, 0u);
}

TEST(ShadowLayout, OrderOfFirstUseNotOfIndex) {
  // Shadow 0 is first used after shadow 1; it still takes shadow 1's slot.
  const ShadowLayout l = layout_shadows({use(256, {3}), use(256, {0, 1})}, kChain);
  EXPECT_EQ(l.offsets, (Offsets{0, 0}));
  EXPECT_EQ(l.bytes, 256u);
}

TEST(ShadowLayout, NoShadowsNoBytes) {
  const ShadowLayout l = layout_shadows({}, kChain);
  EXPECT_TRUE(l.offsets.empty());
  EXPECT_EQ(l.bytes, 0u);
}

// Random DAGs and shadows, checked by brute force: two shadows whose byte ranges overlap have
// every use of one before every use of the other, and no shadow leaves the block.
TEST(ShadowLayout, RandomGraphsNeverOverlapUnorderedShadows) {
  std::mt19937 rng(7);
  std::size_t shared = 0;  // the check must not pass by never sharing
  for (int round = 0; round < 300; ++round) {
    const std::size_t n = 2 + rng() % 40;
    Preds preds(n);
    for (std::size_t i = 1; i < n; ++i) {
      for (std::size_t p = 0; p < i; ++p) if (rng() % 5 == 0) preds[i].push_back(p);
    }
    // reach[a][b]: b is a strict descendant of a.
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t p : preds[i]) {
        reach[p][i] = true;
        for (std::size_t q = 0; q < n; ++q) if (reach[q][p]) reach[q][i] = true;
      }
    }
    std::vector<ShadowUse> shadows(1 + rng() % 12);
    for (auto& sh : shadows) {
      sh.size = 1 + rng() % 2000;
      sh.shareable = rng() % 6 != 0;
      const std::size_t uses = 1 + rng() % 3;
      for (std::size_t u = 0; u < uses; ++u) sh.ops.push_back(rng() % n);
      std::sort(sh.ops.begin(), sh.ops.end());
      sh.ops.erase(std::unique(sh.ops.begin(), sh.ops.end()), sh.ops.end());
    }
    const ShadowLayout l = layout_shadows(shadows, preds);
    ASSERT_EQ(l.offsets.size(), shadows.size());
    shared += l.reused;
    auto before = [&](const ShadowUse& a, const ShadowUse& b) {
      for (std::size_t x : a.ops) for (std::size_t y : b.ops) if (!reach[x][y]) return false;
      return true;
    };
    for (std::size_t a = 0; a < shadows.size(); ++a) {
      EXPECT_LE(l.offsets[a] + shadows[a].size, l.bytes);
      EXPECT_EQ(l.offsets[a] % 256, 0u);
      for (std::size_t b = a + 1; b < shadows.size(); ++b) {
        const bool overlap = l.offsets[a] < l.offsets[b] + shadows[b].size && l.offsets[b] < l.offsets[a] + shadows[a].size;
        if (!overlap) continue;
        EXPECT_TRUE(shadows[a].shareable && shadows[b].shareable) << "round " << round;
        EXPECT_TRUE(before(shadows[a], shadows[b]) || before(shadows[b], shadows[a]))
            << "round " << round << ": shadows " << a << " and " << b << " overlap without an order";
      }
    }
  }
  EXPECT_GT(shared, 100u);
}

}  // namespace
}  // namespace nimble::replayer
