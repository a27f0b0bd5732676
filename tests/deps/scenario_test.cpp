// A small known program whose DAG is known exactly: an input copy, two branches on two
// streams joined through events, a join kernel and an output copy.
#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

TEST(Scenario, ForkJoinProgramGivesTheExpectedDag) {
  constexpr StreamHandle kMain = 0x5100;
  constexpr StreamHandle kSide = 0x5200;
  constexpr EventHandle kForked = 0xe1;
  constexpr EventHandle kJoined = 0xe2;
  constexpr std::uint64_t kIn = 0x10000, kMid1 = 0x20000, kMid2 = 0x30000, kOut = 0x40000;

  Engine engine;
  engine.stream_created(kMain, 0x1, 0, 1);
  engine.stream_created(kSide, 0x1, 0, 1);
  engine.allocated(kIn, 0x400, AllocKind::Device, kLegacyStream);    // alloc 0
  engine.allocated(kMid1, 0x400, AllocKind::Device, kLegacyStream);  // alloc 1
  engine.allocated(kMid2, 0x400, AllocKind::Device, kLegacyStream);  // alloc 2
  engine.allocated(kOut, 0x400, AllocKind::Device, kLegacyStream);   // alloc 3
  engine.begin_window();

  auto h2d = launch(engine, kMain, {wr(kIn, 0x400)}, 1, trace::TaskKind::Memcpy);
  engine.event_recorded(kForked, kMain, 1);
  engine.stream_waited(kSide, kForked, 1);
  auto k1 = launch(engine, kMain, {rd(kIn, 0x400), wr(kMid1, 0x400)});
  auto k2 = launch(engine, kSide, {rd(kIn, 0x400), wr(kMid2, 0x400)});
  engine.event_recorded(kJoined, kSide, 1);
  engine.stream_waited(kMain, kJoined, 1);
  auto join = launch(engine, kMain, {rd(kMid1, 0x400), rd(kMid2, 0x400), wr(kOut, 0x400)});
  auto d2h = launch(engine, kMain, {rd(kOut, 0x400)}, 1, trace::TaskKind::Memcpy);
  engine.host_synced_stream(kMain, 1, "cuStreamSynchronize");
  engine.end_window();

  auto t = engine.build_trace();
  expect_well_formed(t);
  ASSERT_EQ(t.tasks.size(), 6u);

  std::vector<Ids> expected = {{}, {h2d}, {h2d}, {k1, k2}, {join}, {d2h}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(t.tasks[i].deps, expected[i]) << "task " << i;
  }
  EXPECT_EQ(reason(t, k1, h2d), "stream; memory RAW alloc 0 +0x0..+0x400");
  EXPECT_EQ(reason(t, k2, h2d), "event; memory RAW alloc 0 +0x0..+0x400");
  EXPECT_EQ(reason(t, join, k1), "stream; memory RAW alloc 1 +0x0..+0x400");
  EXPECT_EQ(reason(t, join, k2), "event; memory RAW alloc 2 +0x0..+0x400");
  EXPECT_EQ(reason(t, d2h, join), "stream; memory RAW alloc 3 +0x0..+0x400");
  EXPECT_EQ(reason(t, 5, d2h), "host-sync");
  EXPECT_EQ(t.tasks[0].kind, "memcpy");
  EXPECT_EQ(t.tasks[5].kind, "sync");
  EXPECT_EQ(t.tasks[k1].stream, 0);
  EXPECT_EQ(t.tasks[k2].stream, 1);
}

}  // namespace
}  // namespace nimble::deps::testing
