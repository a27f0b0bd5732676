// rewire.hpp: which memory a captured kernel touches, and the edges that replace a captured chain.
#include "nimble/replayer/rewire.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace rw = nimble::replayer::rewire;
using nimble::deps::Access;
using nimble::deps::MemAccess;

namespace {

std::vector<std::uint8_t> words(std::initializer_list<std::uint64_t> values) {
  std::vector<std::uint8_t> bytes(values.size() * 8);
  std::size_t i = 0;
  for (std::uint64_t v : values) std::memcpy(bytes.data() + 8 * i++, &v, 8);
  return bytes;
}

std::vector<nimble::deps::ParamLayout> eight_byte_params(std::size_t n) {
  std::vector<nimble::deps::ParamLayout> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back({static_cast<std::uint32_t>(8 * i), 8});
  return out;
}

// The driver knows one allocation: [0x100000, 0x200000).
std::optional<rw::Range> one_allocation(std::uint64_t w) {
  if (w >= 0x100000 && w < 0x200000) return rw::Range{0x100000, 0x100000};
  return std::nullopt;
}

rw::Node kernel(std::vector<MemAccess> accesses, std::size_t operation = 0) {
  return {rw::NodeKind::Kernel, std::move(accesses), operation};
}
MemAccess reads(std::uint64_t addr) { return {addr, 0x100, Access::Read, false}; }
MemAccess writes(std::uint64_t addr) { return {addr, 0x100, Access::Write, false}; }

using EdgeSet = std::set<std::pair<std::uint32_t, std::uint32_t>>;
EdgeSet edges(const rw::Rewiring& p) { return EdgeSet(p.edges.begin(), p.edges.end()); }

}  // namespace

TEST(RewireKernelAccesses, WordsInTheOperationsTensorsTakeTheirExtentAndMode) {
  const std::vector<rw::Extent> op = {{0x110000, 0x400, false}, {0x120000, 0x800, true}};
  rw::PointerCounts counts;
  const auto got = rw::kernel_accesses(words({0x110010, 0x120000, 7}), eight_byte_params(3), op, one_allocation, &counts);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].addr, 0x110000u);
  EXPECT_EQ(got[0].size, 0x400u);
  EXPECT_EQ(got[0].mode, Access::Read);
  EXPECT_EQ(got[1].addr, 0x120000u);
  EXPECT_EQ(got[1].mode, Access::ReadWrite);
  EXPECT_EQ(counts.in_operation_tensors, 2u);
  EXPECT_EQ(counts.whole_allocations, 0u);
}

TEST(RewireKernelAccesses, AnUnattributedPointerTouchesItsWholeAllocationReadWrite) {
  // A workspace the operation does not name: the whole driver allocation, never a guess.
  rw::PointerCounts counts;
  const auto got = rw::kernel_accesses(words({0x1a0000}), eight_byte_params(1), {{0x110000, 0x400, false}},
                                       one_allocation, &counts);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].addr, 0x100000u);
  EXPECT_EQ(got[0].size, 0x100000u);
  EXPECT_EQ(got[0].mode, Access::ReadWrite);
  EXPECT_EQ(counts.whole_allocations, 1u);
}

TEST(RewireKernelAccesses, ScalarsAndBytesOutsideParametersAreNotPointers) {
  // The second parameter is 4 bytes: the word after it is padding, not an argument.
  const std::vector<nimble::deps::ParamLayout> params = {{0, 8}, {8, 4}};
  const auto got = rw::kernel_accesses(words({42, 0x150000}), params, {}, one_allocation, nullptr);
  EXPECT_TRUE(got.empty());
}

TEST(RewireKernelAccesses, AWordWhereTwoTensorsTouchBelongsToTheWrittenOne) {
  const std::vector<rw::Extent> op = {{0x110000, 0x100, false}, {0x110100, 0x100, true}};
  const auto got = rw::kernel_accesses(words({0x110100}), eight_byte_params(1), op, one_allocation, nullptr);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].addr, 0x110100u);
  EXPECT_EQ(got[0].mode, Access::ReadWrite);
}

TEST(RewirePlan, IndependentBranchesLoseTheCapturedOrder) {
  // 0 writes A; 1 and 2 read A and write B, C; 3 reads B and C.
  const std::vector<rw::Node> nodes = {kernel({writes(0x1000)}), kernel({reads(0x1000), writes(0x2000)}),
                                       kernel({reads(0x1000), writes(0x3000)}),
                                       kernel({reads(0x2000), reads(0x3000), writes(0x4000)})};
  const rw::Rewiring reduced = rw::plan(nodes, rw::Wiring::Reduced);
  EXPECT_EQ(edges(reduced), (EdgeSet{{0, 1}, {0, 2}, {1, 3}, {2, 3}}));
  EXPECT_EQ(reduced.longest_path, 3u);
  EXPECT_EQ(edges(rw::plan(nodes, rw::Wiring::Chain)), (EdgeSet{{0, 1}, {1, 2}, {2, 3}}));
  const rw::Rewiring scheduled = rw::plan(nodes, rw::Wiring::Schedule);
  EXPECT_EQ(scheduled.streams, 2u);
  // Every dependency is implied by the schedule's edges (same stream order or a wait).
  const EdgeSet s = edges(scheduled);
  for (auto [from, to] : edges(reduced)) {
    const bool direct = s.count({from, to}) > 0;
    const bool through = std::any_of(s.begin(), s.end(), [&](auto e) { return e.first == from && s.count({e.second, to}); });
    EXPECT_TRUE(direct || through) << from << "->" << to;
  }
}

TEST(RewirePlan, WriteAfterReadAndWriteAfterWriteAreKept) {
  const std::vector<rw::Node> nodes = {kernel({reads(0x1000), writes(0x2000)}), kernel({writes(0x1000)}),
                                       kernel({writes(0x2000)})};
  EXPECT_EQ(edges(rw::plan(nodes, rw::Wiring::Reduced)), (EdgeSet{{0, 1}, {0, 2}}));
}

TEST(RewirePlan, NodesOfOneOperationKeepTheirOrder) {
  const std::vector<rw::Node> nodes = {kernel({writes(0x1000)}, 7), kernel({writes(0x2000)}, 7),
                                       kernel({writes(0x3000)}, 8)};
  EXPECT_EQ(edges(rw::plan(nodes, rw::Wiring::Reduced)), (EdgeSet{{0, 1}}));
}

TEST(RewirePlan, NodesNimbleCannotDescribeKeepAllOrderAroundThem) {
  const std::vector<rw::Node> nodes = {kernel({writes(0x1000)}), kernel({writes(0x2000)}),
                                       {rw::NodeKind::Other, {{0, 0, Access::ReadWrite, true}}, 0},
                                       kernel({writes(0x3000)})};
  EXPECT_EQ(edges(rw::plan(nodes, rw::Wiring::Reduced)), (EdgeSet{{0, 2}, {1, 2}, {2, 3}}));
}

TEST(RewirePlan, NewEdgesBetweenCapturedPairsAreFound) {
  // Captured chain 0->1->2->3; the new wiring keeps 0->1 and 2->3, and adds 0->2.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> captured = {{0, 1}, {1, 2}, {2, 3}};
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> edges = {{0, 1}, {0, 2}, {2, 3}};
  EXPECT_EQ(rw::same_pairs(edges, captured), (std::vector<std::ptrdiff_t>{0, -1, 2}));
  EXPECT_EQ(rw::same_pairs(edges, {}), (std::vector<std::ptrdiff_t>{-1, -1, -1}));
  EXPECT_TRUE(rw::same_pairs({}, captured).empty());
}

TEST(RewirePlan, AnEmptyGraphIsAnError) {
  EXPECT_THROW(rw::plan({}, rw::Wiring::Reduced), std::invalid_argument);
}

TEST(RewirePlan, WiringNamesRoundTrip) {
  for (auto w : {rw::Wiring::Chain, rw::Wiring::Reduced, rw::Wiring::Schedule}) {
    EXPECT_EQ(rw::parse_wiring(rw::wiring_name(w)), (rw::WiringSpec{w, 0}));
  }
  const rw::WiringSpec capped{rw::Wiring::Schedule, 4};
  EXPECT_EQ(rw::wiring_name(capped), "schedule:4");
  EXPECT_EQ(rw::parse_wiring("schedule:4"), capped);
  EXPECT_FALSE(rw::parse_wiring("fastest"));
  for (const char* bad : {"schedule:", "schedule:0", "schedule:1025", "schedule:4x", "reduced:4", "schedule:-1"}) {
    EXPECT_FALSE(rw::parse_wiring(bad)) << bad;
  }
}

TEST(RewirePlan, AScheduleKeepsToItsStreamCap) {
  // Four independent branches, each a write then a read of its own buffer, joined by node 8.
  std::vector<rw::Node> nodes;
  for (std::uint64_t b = 0; b < 4; ++b) nodes.push_back(kernel({writes(0x1000 * (b + 1))}));
  for (std::uint64_t b = 0; b < 4; ++b) nodes.push_back(kernel({reads(0x1000 * (b + 1)), writes(0x10000 * (b + 1))}));
  nodes.push_back(kernel({reads(0x10000), reads(0x20000), reads(0x30000), reads(0x40000)}));
  EXPECT_EQ(rw::plan(nodes, rw::Wiring::Schedule).streams, 4u);
  const rw::Rewiring two = rw::plan(nodes, rw::WiringSpec{rw::Wiring::Schedule, 2});
  EXPECT_EQ(two.streams, 2u);
  EXPECT_LT(two.syncs, rw::plan(nodes, rw::Wiring::Schedule).syncs);
  // Still every dependency holds: each read after its write, the join after every branch.
  const EdgeSet s = edges(two);
  std::vector<std::set<std::uint32_t>> reach(nodes.size());
  for (std::uint32_t v = 0; v < nodes.size(); ++v) {
    for (auto [from, to] : s) {
      if (to == v) {
        reach[v].insert(from);
        reach[v].insert(reach[from].begin(), reach[from].end());
      }
    }
  }
  for (std::uint32_t b = 0; b < 4; ++b) {
    EXPECT_TRUE(reach[4 + b].count(b)) << "read of branch " << b;
    EXPECT_TRUE(reach[8].count(4 + b)) << "join after branch " << b;
  }
}
