// Stream order, independent streams, the legacy default stream and per-thread default streams.
#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr StreamHandle kA = 0xa000;
constexpr StreamHandle kB = 0xb000;
constexpr StreamHandle kN = 0xc000;  // non-blocking
constexpr unsigned kNonBlocking = 0x1;

class Streams : public ::testing::Test {
 protected:
  void SetUp() override {
    engine.stream_created(kA, 0, 0, 1);
    engine.stream_created(kB, 0, 0, 1);
    engine.stream_created(kN, kNonBlocking, -1, 1);
    engine.begin_window();
  }
  trace::Trace trace() {
    auto t = engine.build_trace();
    expect_well_formed(t);
    return t;
  }
  Engine engine;
};

TEST_F(Streams, TasksOnOneStreamFormAChain) {
  auto t0 = launch(engine, kA);
  auto t1 = launch(engine, kA);
  auto t2 = launch(engine, kA);
  auto t = trace();
  EXPECT_EQ(deps_of(t, t0), Ids{});
  EXPECT_EQ(deps_of(t, t1), Ids{t0});
  EXPECT_EQ(deps_of(t, t2), Ids{t1});  // not t0: implied through t1
  EXPECT_EQ(reason(t, t2, t1), "stream");
}

TEST_F(Streams, TwoStreamsAreIndependent) {
  auto a0 = launch(engine, kA);
  auto b0 = launch(engine, kB);
  auto a1 = launch(engine, kA);
  auto b1 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{});
  EXPECT_EQ(deps_of(t, a1), Ids{a0});
  EXPECT_EQ(deps_of(t, b1), Ids{b0});
}

TEST_F(Streams, StreamIndicesFollowFirstUse) {
  launch(engine, kB);
  launch(engine, kLegacyStream);
  launch(engine, kA);
  launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(task_of(t, 0).stream, 0);
  EXPECT_EQ(task_of(t, 1).stream, 1);
  EXPECT_EQ(task_of(t, 2).stream, 2);
  EXPECT_EQ(task_of(t, 3).stream, 0);
  const auto& streams = t.extra.at("streams");
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_EQ(streams[0].at("handle"), "0xb000");
  EXPECT_EQ(streams[0].at("kind"), "created");
  EXPECT_EQ(streams[1].at("kind"), "legacy");
  EXPECT_EQ(streams[1].at("handle"), "0x1");
  EXPECT_EQ(streams[2].at("index"), 2);
}

TEST_F(Streams, StreamListRecordsFlagsAndPriority) {
  launch(engine, kN);
  auto t = trace();
  const auto& s = t.extra.at("streams").at(0);
  EXPECT_EQ(s.at("flags"), kNonBlocking);
  EXPECT_EQ(s.at("priority"), -1);
}

TEST_F(Streams, LegacyWaitsForBlockingStreamsAndTheyWaitForIt) {
  auto a0 = launch(engine, kA);
  auto b0 = launch(engine, kB);
  auto l0 = launch(engine, kLegacyStream);
  auto a1 = launch(engine, kA);
  auto t = trace();
  EXPECT_EQ(deps_of(t, l0), (Ids{a0, b0}));
  EXPECT_EQ(reason(t, l0, a0), "default-stream");
  EXPECT_EQ(deps_of(t, a1), (Ids{a0, l0}));
  EXPECT_EQ(reason(t, a1, l0), "default-stream");
  EXPECT_EQ(reason(t, a1, a0), "stream");
}

TEST_F(Streams, LegacyDoesNotRepeatEdgesItAlreadyHas) {
  auto a0 = launch(engine, kA);
  auto l0 = launch(engine, kLegacyStream);
  auto l1 = launch(engine, kLegacyStream);
  auto a1 = launch(engine, kA);
  auto a2 = launch(engine, kA);
  auto t = trace();
  EXPECT_EQ(deps_of(t, l0), Ids{a0});
  EXPECT_EQ(deps_of(t, l1), Ids{l0});
  EXPECT_EQ(deps_of(t, a1), (Ids{a0, l1}));
  EXPECT_EQ(deps_of(t, a2), Ids{a1});
}

TEST_F(Streams, NonBlockingStreamIgnoresLegacyStream) {
  auto n0 = launch(engine, kN);
  auto l0 = launch(engine, kLegacyStream);
  auto n1 = launch(engine, kN);
  auto t = trace();
  EXPECT_EQ(deps_of(t, l0), Ids{});
  EXPECT_EQ(deps_of(t, n1), Ids{n0});
}

TEST_F(Streams, UnknownHandleIsTreatedAsBlocking) {
  constexpr StreamHandle kUnknown = 0xdead00;
  auto u0 = launch(engine, kUnknown);
  auto l0 = launch(engine, kLegacyStream);
  auto u1 = launch(engine, kUnknown);
  auto t = trace();
  EXPECT_EQ(deps_of(t, l0), Ids{u0});
  EXPECT_EQ(deps_of(t, u1), (Ids{u0, l0}));
  EXPECT_EQ(t.extra.at("streams").at(0).at("seen_created"), false);
}

TEST_F(Streams, BlockingStreamsDoNotSynchroniseWithEachOther) {
  launch(engine, kLegacyStream);
  auto a0 = launch(engine, kA);
  auto b0 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, a0), Ids{0});
  EXPECT_EQ(deps_of(t, b0), Ids{0});
}

TEST_F(Streams, PerThreadDefaultStreamsAreDistinctPerThread) {
  auto p0 = launch(engine, kPerThreadStream, {}, 1);
  auto q0 = launch(engine, kPerThreadStream, {}, 2);
  auto p1 = launch(engine, kPerThreadStream, {}, 1);
  auto q1 = launch(engine, kPerThreadStream, {}, 2);
  auto t = trace();
  EXPECT_EQ(deps_of(t, q0), Ids{});
  EXPECT_EQ(deps_of(t, p1), Ids{p0});
  EXPECT_EQ(deps_of(t, q1), Ids{q0});
  EXPECT_NE(task_of(t, p0).stream, task_of(t, q0).stream);
  const auto& streams = t.extra.at("streams");
  EXPECT_EQ(streams.at(0).at("kind"), "per-thread");
  EXPECT_EQ(streams.at(0).at("thread"), 1);
  EXPECT_EQ(streams.at(1).at("thread"), 2);
  EXPECT_EQ(streams.at(1).at("handle"), "0x2");
}

TEST_F(Streams, PerThreadDefaultStreamsSynchroniseWithLegacy) {
  auto p0 = launch(engine, kPerThreadStream, {}, 1);
  auto q0 = launch(engine, kPerThreadStream, {}, 2);
  auto n0 = launch(engine, kN);
  auto l0 = launch(engine, kLegacyStream, {}, 1);
  auto p1 = launch(engine, kPerThreadStream, {}, 1);
  auto t = trace();
  EXPECT_EQ(deps_of(t, l0), (Ids{p0, q0}));  // not n0: non-blocking
  EXPECT_EQ(deps_of(t, p1), (Ids{p0, l0}));
  (void)n0;
}

TEST_F(Streams, LegacyStreamIsOneStreamForAllThreads) {
  auto l0 = launch(engine, kLegacyStream, {}, 1);
  auto l1 = launch(engine, kLegacyStream, {}, 2);
  auto t = trace();
  EXPECT_EQ(deps_of(t, l1), Ids{l0});
  EXPECT_EQ(task_of(t, l0).stream, task_of(t, l1).stream);
}

TEST_F(Streams, DestroyedHandleReusedIsANewStream) {
  auto a0 = launch(engine, kA);
  engine.stream_destroyed(kA);
  engine.stream_created(kA, kNonBlocking, 0, 1);
  auto a1 = launch(engine, kA);
  auto l0 = launch(engine, kLegacyStream);
  auto t = trace();
  EXPECT_EQ(deps_of(t, a1), Ids{});  // a different stream that happens to reuse the handle
  EXPECT_NE(task_of(t, a0).stream, task_of(t, a1).stream);
  // Work left on the destroyed blocking stream still runs and the legacy stream waits for it.
  EXPECT_EQ(deps_of(t, l0), Ids{a0});
}

TEST_F(Streams, TaskRecordsThreadKindAndDetail) {
  TaskEvent ev;
  ev.kind = trace::TaskKind::Memset;
  ev.stream = kA;
  ev.thread = 7;
  ev.detail = {{"name", "fill"}, {"bytes", 64}, {"id", 99}, {"duration_us", 2.5}};
  auto id = engine.task(std::move(ev));
  auto t = trace();
  const auto& task = task_of(t, id);
  EXPECT_EQ(task.kind, "memset");
  EXPECT_EQ(task.extra.at("thread"), 7);
  EXPECT_EQ(task.extra.at("name"), "fill");
  EXPECT_EQ(task.extra.at("bytes"), 64);
  EXPECT_EQ(task.id, 0);                       // the engine's id wins ...
  EXPECT_EQ(task.extra.at("detail_id"), 99);   // ... and the hook's value is kept aside
  ASSERT_TRUE(task.duration_us.has_value());
  EXPECT_DOUBLE_EQ(*task.duration_us, 2.5);
}

}  // namespace
}  // namespace nimble::deps::testing
