// PointerMap (interposer/hooks/pointer_map.hpp), the flat map nimble follows library descriptors
// in: the same answers as std::unordered_map through long runs of inserts, updates and erases
// (backward-shift deletion must keep every entry of a probe run findable, across the wrap-around).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>

#include "pointer_map.hpp"

namespace nimble::hooks {
namespace {

const void* ptr(std::uintptr_t v) { return reinterpret_cast<const void*>(v); }

TEST(PointerMap, FindsWhatWasAssignedAndForgetsWhatWasErased) {
  PointerMap<int> m;
  EXPECT_EQ(m.find(ptr(16)), nullptr);
  m.assign(ptr(16), 1);
  m.assign(ptr(32), 2);
  m.assign(ptr(16), 3);  // replaces
  ASSERT_NE(m.find(ptr(16)), nullptr);
  EXPECT_EQ(*m.find(ptr(16)), 3);
  EXPECT_EQ(*m.find(ptr(32)), 2);
  EXPECT_EQ(m.size(), 2u);
  m.erase(ptr(16));
  m.erase(ptr(48));  // absent: nothing happens
  EXPECT_EQ(m.find(ptr(16)), nullptr);
  EXPECT_EQ(*m.find(ptr(32)), 2);
  EXPECT_EQ(m.size(), 1u);
  m.assign(nullptr, 9);  // the null pointer is never a key
  EXPECT_EQ(m.find(nullptr), nullptr);
  EXPECT_EQ(m.size(), 1u);
}

// Descriptors as PyTorch makes them: a few live at a time, created and destroyed around each call,
// their addresses reused; plus a growing set of long-lived ones (cuDNN's cached plans).
TEST(PointerMap, AgreesWithUnorderedMapThroughChurnAndGrowth) {
  std::mt19937_64 rng(7);
  PointerMap<std::uint64_t> m;
  std::unordered_map<const void*, std::uint64_t> want;
  for (int step = 0; step < 200000; ++step) {
    // Few distinct addresses (heavy reuse, long probe runs) early; more later (growth).
    const std::uintptr_t range = step < 100000 ? 96 : 4096;
    const void* key = ptr(0x7f0000000000ull + 64 * (1 + rng() % range));
    switch (rng() % 3) {
      case 0:
      case 1: {
        const std::uint64_t v = rng();
        m.assign(key, v);
        want[key] = v;
        break;
      }
      default:
        m.erase(key);
        want.erase(key);
    }
    if (step % 997 == 0) {
      ASSERT_EQ(m.size(), want.size()) << "step " << step;
      for (const auto& [k, v] : want) {
        const std::uint64_t* got = m.find(k);
        ASSERT_NE(got, nullptr) << "step " << step;
        ASSERT_EQ(*got, v) << "step " << step;
      }
    }
    const std::uint64_t* got = m.find(key);
    const auto it = want.find(key);
    ASSERT_EQ(got != nullptr, it != want.end()) << "step " << step;
  }
}

}  // namespace
}  // namespace nimble::hooks
