// Host synchronisation points: stream, event and context syncs order all later work.
#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr StreamHandle kA = 0xa000;
constexpr StreamHandle kB = 0xb000;
constexpr StreamHandle kN = 0xc000;  // non-blocking
constexpr EventHandle kE = 0xe1;

class HostSync : public ::testing::Test {
 protected:
  void SetUp() override {
    engine.stream_created(kA, 0, 0, 1);
    engine.stream_created(kB, 0, 0, 1);
    engine.stream_created(kN, 0x1, 0, 1);
    engine.begin_window();
  }
  trace::Trace trace() {
    auto t = engine.build_trace();
    expect_well_formed(t);
    return t;
  }
  Engine engine;
};

TEST_F(HostSync, StreamSyncIsATaskOrderingLaterWorkOnAnyStream) {
  auto a0 = launch(engine, kA);
  auto b0 = launch(engine, kB);
  engine.host_synced_stream(kA, 1, "cuStreamSynchronize");
  const trace::TaskId s = 2;
  auto b1 = launch(engine, kB, {}, 2);
  auto b2 = launch(engine, kB, {}, 2);
  auto a1 = launch(engine, kA);
  auto t = trace();
  ASSERT_EQ(t.tasks.size(), 6u);
  const auto& sync = task_of(t, s);
  EXPECT_EQ(sync.kind, "sync");
  EXPECT_FALSE(sync.stream.has_value());
  EXPECT_EQ(sync.extra.at("api"), "cuStreamSynchronize");
  EXPECT_EQ(sync.extra.at("sync"), "stream");
  EXPECT_EQ(sync.extra.at("synced_stream"), task_of(t, a0).stream.value());
  EXPECT_EQ(sync.deps, Ids{a0});
  EXPECT_EQ(reason(t, s, a0), "host-sync");
  EXPECT_EQ(deps_of(t, b1), (Ids{b0, s}));
  EXPECT_EQ(reason(t, b1, s), "host-sync");
  EXPECT_EQ(deps_of(t, b2), Ids{b1});  // already behind the sync through b1
  EXPECT_EQ(deps_of(t, a1), (Ids{a0, s}));
}

TEST_F(HostSync, EventSyncWaitsForTheCapturedWork) {
  auto a0 = launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  auto a1 = launch(engine, kA);
  engine.host_synced_event(kE, 1, "cuEventSynchronize");
  auto n0 = launch(engine, kN);
  auto t = trace();
  EXPECT_EQ(deps_of(t, 2), Ids{a0});
  EXPECT_EQ(task_of(t, 2).extra.at("sync"), "event");
  EXPECT_EQ(deps_of(t, n0), Ids{2});
  (void)a1;
}

TEST_F(HostSync, ContextSyncWaitsForEveryStream) {
  auto a0 = launch(engine, kA);
  auto n0 = launch(engine, kN);
  auto p0 = launch(engine, kPerThreadStream, {}, 3);
  auto l0 = launch(engine, kLegacyStream);  // depends on a0 and p0
  engine.host_synced_context(1, "cuCtxSynchronize");
  const trace::TaskId s = 4;
  auto t = trace();
  // a0 and p0 are behind l0, but listing them is harmless; n0 and l0 are required.
  auto deps = deps_of(t, s);
  EXPECT_TRUE(std::find(deps.begin(), deps.end(), n0) != deps.end());
  EXPECT_TRUE(std::find(deps.begin(), deps.end(), l0) != deps.end());
  (void)a0;
  (void)p0;
}

TEST_F(HostSync, SyncsFormAChainAndSkipCoveredStreams) {
  auto a0 = launch(engine, kA);
  auto b0 = launch(engine, kB);
  engine.host_synced_context(1, "cuCtxSynchronize");  // 2
  auto a1 = launch(engine, kA);                       // 3
  engine.host_synced_context(1, "cuCtxSynchronize");  // 4
  engine.host_synced_stream(kB, 1, "cuStreamSynchronize");  // 5: nothing new on B
  auto t = trace();
  EXPECT_EQ(deps_of(t, 2), (Ids{a0, b0}));
  EXPECT_EQ(deps_of(t, 4), (Ids{2, a1}));  // not b0 again: behind sync 2
  EXPECT_EQ(deps_of(t, 5), Ids{4});       // nor here
}

TEST_F(HostSync, SyncOnUnrecordedEventOnlyChains) {
  launch(engine, kA);
  engine.host_synced_event(kE, 1, "cuEventSynchronize");
  auto t = trace();
  EXPECT_EQ(deps_of(t, 1), Ids{});
}

TEST_F(HostSync, SyncOfLegacyStreamIncludesBlockingWork) {
  auto a0 = launch(engine, kA);
  engine.host_synced_stream(kLegacyStream, 1, "cudaStreamSynchronize");
  auto t = trace();
  EXPECT_EQ(deps_of(t, 1), Ids{a0});  // conservative: the legacy stream waits for blocking work
}

}  // namespace
}  // namespace nimble::deps::testing
