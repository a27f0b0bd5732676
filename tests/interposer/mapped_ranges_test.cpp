// Mapped virtual memory is coalesced into allocations a straddling tensor cannot escape.
#include <gtest/gtest.h>

#include "mapped_ranges.hpp"

namespace nimble::hooks {
namespace {

using Change = MappedRanges::Change;

bool same(const std::vector<Change>& a, const std::vector<Change>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].allocate != b[i].allocate || a[i].addr != b[i].addr || a[i].size != b[i].size) return false;
  }
  return true;
}

TEST(MappedRanges, AdjacentMappingsMergeIntoOneAllocation) {
  MappedRanges m;
  EXPECT_TRUE(same(m.map(0x1000, 0x1000), {{true, 0x1000, 0x1000}}));
  // Growing an expandable segment: the old allocation is replaced by the larger one.
  EXPECT_TRUE(same(m.map(0x2000, 0x1000), {{false, 0x1000, 0x1000}, {true, 0x1000, 0x2000}}));
  EXPECT_EQ(m.run_count(), 1u);
  // A separate mapping stays separate.
  EXPECT_TRUE(same(m.map(0x8000, 0x1000), {{true, 0x8000, 0x1000}}));
  // Filling the gap joins all three.
  EXPECT_TRUE(same(m.map(0x3000, 0x5000),
                   {{false, 0x1000, 0x2000}, {false, 0x8000, 0x1000}, {true, 0x1000, 0x8000}}));
  EXPECT_EQ(m.run_count(), 1u);
}

TEST(MappedRanges, UnmappingSplitsTheAllocation) {
  MappedRanges m;
  m.map(0x1000, 0x4000);
  EXPECT_TRUE(same(m.unmap(0x2000, 0x1000),
                   {{false, 0x1000, 0x4000}, {true, 0x1000, 0x1000}, {true, 0x3000, 0x2000}}));
  EXPECT_EQ(m.run_count(), 2u);
  EXPECT_TRUE(same(m.unmap(0x0, 0x10000), {{false, 0x1000, 0x1000}, {false, 0x3000, 0x2000}}));
  EXPECT_EQ(m.run_count(), 0u);
  EXPECT_TRUE(m.unmap(0x1000, 0x1000).empty());
  EXPECT_TRUE(m.map(0x1000, 0).empty());
}

}  // namespace
}  // namespace nimble::hooks
