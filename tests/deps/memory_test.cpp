// Memory conflicts: RAW, WAR and WAW over overlapping ranges, address reuse, `everything`.
#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

// Separate streams, so every edge in these tests comes from memory.
constexpr StreamHandle kS1 = 0x1000;
constexpr StreamHandle kS2 = 0x2000;
constexpr StreamHandle kS3 = 0x3000;
constexpr StreamHandle kS4 = 0x4000;

constexpr std::uint64_t kX = 0x7f0000010000;  // alloc 0, 0x1000 bytes
constexpr std::uint64_t kY = 0x7f0000020000;  // alloc 1, 0x1000 bytes

class Memory : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto s : {kS1, kS2, kS3, kS4}) engine.stream_created(s, 0x1, 0, 1);
    engine.allocated(kX, 0x1000, AllocKind::Device, kLegacyStream);
    engine.allocated(kY, 0x1000, AllocKind::Device, kLegacyStream);
    engine.begin_window();
  }
  trace::Trace trace() {
    auto t = engine.build_trace();
    expect_well_formed(t);
    return t;
  }
  Engine engine;
};

TEST_F(Memory, ReadAfterWrite) {
  auto w = launch(engine, kS1, {wr(kX, 0x100)});
  auto r = launch(engine, kS2, {rd(kX + 0x80, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, r), Ids{w});
  EXPECT_EQ(reason(t, r, w), "memory RAW alloc 0 +0x80..+0x90");
}

TEST_F(Memory, ReadsDoNotDependOnReads) {
  auto r1 = launch(engine, kS1, {rd(kX, 0x100)});
  auto r2 = launch(engine, kS2, {rd(kX, 0x100)});
  auto r3 = launch(engine, kS3, {rd(kX + 0x10, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, r2), Ids{});
  EXPECT_EQ(deps_of(t, r3), Ids{});
  (void)r1;
}

TEST_F(Memory, WriteAfterReadsDependsOnEveryReader) {
  auto r1 = launch(engine, kS1, {rd(kX, 0x100)});
  auto r2 = launch(engine, kS2, {rd(kX + 0x40, 0x100)});
  auto w = launch(engine, kS3, {wr(kX + 0x80, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, w), (Ids{r1, r2}));
  EXPECT_EQ(reason(t, w, r1), "memory WAR alloc 0 +0x80..+0x90");
}

TEST_F(Memory, WriteAfterWrite) {
  auto w1 = launch(engine, kS1, {wr(kX, 0x100)});
  auto w2 = launch(engine, kS2, {wr(kX + 0xf0, 0x100)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, w2), Ids{w1});
  EXPECT_EQ(reason(t, w2, w1), "memory WAW alloc 0 +0xf0..+0x100");
}

TEST_F(Memory, ReadWriteConflictsBothWays) {
  auto a = launch(engine, kS1, {rw(kX, 0x100)});
  auto r = launch(engine, kS2, {rd(kX, 0x10)});
  auto b = launch(engine, kS3, {rw(kX, 0x100)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, r), Ids{a});
  EXPECT_EQ(deps_of(t, b), (Ids{a, r}));
  EXPECT_EQ(reason(t, b, a), "memory RAW alloc 0 +0x0..+0x100");
  EXPECT_EQ(reason(t, b, r), "memory WAR alloc 0 +0x0..+0x10");
}

TEST_F(Memory, AdjacentRangesDoNotConflict) {
  launch(engine, kS1, {wr(kX, 0x100)});
  auto b = launch(engine, kS2, {wr(kX + 0x100, 0x100)});
  auto c = launch(engine, kS3, {rd(kY, 0x1000)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, b), Ids{});
  EXPECT_EQ(deps_of(t, c), Ids{});
}

TEST_F(Memory, ViewsInsideAnAllocationConflictWithTheWhole) {
  auto view_writer = launch(engine, kS1, {wr(kX + 0x400, 0x100)});
  auto whole_reader = launch(engine, kS2, {rd(kX, 0x1000)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, whole_reader), Ids{view_writer});
  EXPECT_EQ(reason(t, whole_reader, view_writer), "memory RAW alloc 0 +0x400..+0x500");
}

TEST_F(Memory, LaterWriteHidesEarlierWritersAndReaders) {
  auto r = launch(engine, kS1, {rd(kX, 0x100)});
  auto w1 = launch(engine, kS2, {wr(kX, 0x100)});
  auto w2 = launch(engine, kS3, {wr(kX, 0x100)});
  auto r2 = launch(engine, kS4, {rd(kX, 0x100)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, w1), Ids{r});
  EXPECT_EQ(deps_of(t, w2), Ids{w1});  // r is behind w1
  EXPECT_EQ(deps_of(t, r2), Ids{w2});
}

TEST_F(Memory, PartialOverwriteSplitsOwnership) {
  auto a = launch(engine, kS1, {wr(kX, 0x100)});
  auto b = launch(engine, kS2, {wr(kX + 0x40, 0x40)});
  auto whole = launch(engine, kS3, {rd(kX, 0x100)});
  auto middle = launch(engine, kS4, {rd(kX + 0x40, 0x40)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, whole), (Ids{a, b}));
  // Two pieces of a's range conflict; the reason spans them.
  EXPECT_EQ(reason(t, whole, a), "memory RAW alloc 0 +0x0..+0x100");
  EXPECT_EQ(deps_of(t, middle), Ids{b});
}

TEST_F(Memory, PrefixRewriteKeepsTheOldWriterForTheRest) {
  auto a = launch(engine, kS1, {wr(kX, 0x100)});
  auto b = launch(engine, kS2, {wr(kX, 0x40)});
  auto tail = launch(engine, kS3, {rd(kX + 0x80, 0x80)});
  auto head = launch(engine, kS4, {rd(kX, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, tail), Ids{a});
  EXPECT_EQ(deps_of(t, head), Ids{b});
}

TEST_F(Memory, OnlyTheLatestReaderPerStreamIsKept) {
  auto r1 = launch(engine, kS1, {rd(kX, 0x100)});
  auto r2 = launch(engine, kS1, {rd(kX, 0x100)});
  auto w = launch(engine, kS2, {wr(kX, 0x100)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, w), Ids{r2});  // r1 is behind r2 by stream order
  (void)r1;
}

TEST_F(Memory, SameStreamPredecessorGetsOneEdgeWithBothReasons) {
  auto w = launch(engine, kS1, {wr(kX, 0x100)});
  auto r = launch(engine, kS1, {rd(kX, 0x100), rd(kY, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, r), Ids{w});
  EXPECT_EQ(reason(t, r, w), "stream; memory RAW alloc 0 +0x0..+0x100");
}

TEST_F(Memory, SeveralAllocationsGiveSeveralReasons) {
  auto w = launch(engine, kS1, {wr(kX, 0x100), wr(kY, 0x100)});
  auto r = launch(engine, kS2, {rd(kX, 0x10), rw(kY + 0x20, 0x10)});
  auto t = trace();
  EXPECT_EQ(reason(t, r, w), "memory RAW alloc 0 +0x0..+0x10; memory RAW alloc 1 +0x20..+0x30");
}

TEST_F(Memory, OwnAccessesDoNotMakeSelfEdges) {
  auto a = launch(engine, kS1, {rd(kX, 0x100), wr(kX, 0x100), rd(kX + 0x10, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, a), Ids{});
}

TEST_F(Memory, UntrackedAddressesUseAbsoluteRanges) {
  auto w = launch(engine, kS1, {wr(0x5000, 0x10)});
  auto r = launch(engine, kS2, {rd(0x5008, 0x10)});
  auto t = trace();
  EXPECT_EQ(reason(t, r, w), "memory RAW 0x5008..0x5010");
  EXPECT_EQ(task_of(t, r).extra.at("mem"),
            trace::json::parse(R"([{"addr":"0x5008","size":16,"mode":"r"}])"));
}

TEST_F(Memory, MemFieldListsAccesses) {
  auto a = launch(engine, kS1, {rd(kX + 0x20, 0x10), wr(kY, 0x1000), everything(Access::Read)});
  auto t = trace();
  const auto& mem = task_of(t, a).extra.at("mem");
  ASSERT_EQ(mem.size(), 3u);
  EXPECT_EQ(mem[0], (trace::json{{"alloc", 0}, {"offset", 0x20}, {"size", 0x10}, {"mode", "r"}}));
  EXPECT_EQ(mem[1], (trace::json{{"alloc", 1}, {"offset", 0}, {"size", 0x1000}, {"mode", "w"}}));
  EXPECT_EQ(mem[2], (trace::json{{"everything", true}, {"mode", "r"}}));
}

TEST_F(Memory, ReusedAddressConflictsWithTheFreedAllocation) {
  auto w = launch(engine, kS1, {wr(kX, 0x1000)});
  engine.freed(kX, kLegacyStream);
  engine.allocated(kX + 0x800, 0x100, AllocKind::Async, kS2);  // alloc 2, inside the old range
  auto r = launch(engine, kS2, {wr(kX + 0x800, 0x100)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, r), Ids{w});
  EXPECT_EQ(reason(t, r, w), "memory WAW alloc 2 +0x0..+0x100");
}

TEST_F(Memory, EverythingWriteDependsOnAllAndHidesThem) {
  auto wx = launch(engine, kS1, {wr(kX, 0x100)});
  auto ry = launch(engine, kS2, {rd(kY, 0x100)});
  auto all = launch(engine, kS3, {everything()});
  auto rx = launch(engine, kS4, {rd(kX, 0x10)});
  auto wy = launch(engine, kS2, {wr(kY, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, all), (Ids{wx, ry}));
  EXPECT_EQ(reason(t, all, wx), "memory RAW everything");
  EXPECT_EQ(reason(t, all, ry), "memory WAR everything");
  EXPECT_EQ(deps_of(t, rx), Ids{all});  // not wx: behind `all`
  EXPECT_EQ(reason(t, rx, all), "memory RAW everything");
  EXPECT_EQ(deps_of(t, wy), (Ids{ry, all}));
}

TEST_F(Memory, EverythingReadOrdersAfterWritersAndBeforeLaterWriters) {
  auto w = launch(engine, kS1, {wr(kX, 0x100)});
  auto r = launch(engine, kS2, {rd(kY, 0x100)});
  auto all = launch(engine, kS3, {everything(Access::Read)});
  auto r2 = launch(engine, kS4, {rd(kX, 0x100)});
  auto w2 = launch(engine, kS4, {wr(kY + 0x200, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, all), Ids{w});  // reads do not conflict with reads
  EXPECT_EQ(deps_of(t, r2), Ids{w});
  EXPECT_EQ(deps_of(t, w2), (Ids{all, r2}));
  EXPECT_EQ(reason(t, w2, all), "memory WAR everything");
  (void)r;
}

TEST_F(Memory, EverythingAfterEverything) {
  auto a = launch(engine, kS1, {everything()});
  auto b = launch(engine, kS2, {everything(Access::Read)});
  auto c = launch(engine, kS3, {everything(Access::Read)});
  auto d = launch(engine, kS4, {everything(Access::Write)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, b), Ids{a});
  EXPECT_EQ(deps_of(t, c), Ids{a});
  EXPECT_EQ(deps_of(t, d), (Ids{a, b, c}));
}

TEST_F(Memory, ZeroSizedAccessesTouchNothing) {
  launch(engine, kS1, {wr(kX, 0x100)});
  auto r = launch(engine, kS2, {rd(kX, 0)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, r), Ids{});
}

}  // namespace
}  // namespace nimble::deps::testing
