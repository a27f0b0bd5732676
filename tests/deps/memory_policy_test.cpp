// The Memory ordering policy: relaxable tasks (kernel / memcpy / memset with known accesses) on
// one stream are ordered by memory conflicts only; non-relaxable tasks, events, the legacy
// stream and host syncs still cover every earlier task of the stream.
#include <numeric>

#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr StreamHandle kS = 0x5000;  // blocking created stream
constexpr StreamHandle kT = 0x6000;  // blocking created stream
constexpr StreamHandle kN = 0x7000;  // non-blocking
constexpr EventHandle kE = 0xe1;

// Allocations 0..7, 0x1000 bytes each, 0x10000 apart.
constexpr std::uint64_t buf(int i) { return 0x7f0000000000ull + 0x10000ull * static_cast<std::uint64_t>(i); }
constexpr std::uint64_t kSize = 0x1000;

bool contains(const Ids& ids, trace::TaskId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); }

Ids range_ids(trace::TaskId first, trace::TaskId last) {  // [first, last]
  Ids out(static_cast<std::size_t>(last - first + 1));
  std::iota(out.begin(), out.end(), first);
  return out;
}

class MemoryPolicy : public ::testing::Test {
 public:
  static void prepare(Engine& e, StreamOrderPolicy policy) {
    e.set_stream_order_policy(policy);
    e.stream_created(kS, 0, 0, 1);
    e.stream_created(kT, 0, 0, 1);
    e.stream_created(kN, 0x1, 0, 1);
    for (int i = 0; i < 8; ++i) e.allocated(buf(i), kSize, AllocKind::Device, kLegacyStream);
    e.begin_window();
  }
  static trace::Trace trace_of(Engine& e) {
    auto t = e.build_trace();
    expect_well_formed(t);
    return t;
  }

 protected:
  void SetUp() override { prepare(engine, StreamOrderPolicy::Memory); }
  trace::Trace trace() { return trace_of(engine); }
  Engine engine;
};

// ---------------------------------------------------------------------------------------------
// Two independent branches on one stream, then a join.

struct BranchIds {
  trace::TaskId input, a1, b1, a2, b2, join, output;
};

// input copy -> {branch A: a1, a2 on buf 1} and {branch B: b1, b2 on buf 2}, issued interleaved
// as a framework would, -> join reading both -> output copy.
BranchIds branchy_program(Engine& e, StreamHandle stream) {
  BranchIds ids{};
  ids.input = launch(e, stream, {wr(buf(0), kSize)}, 1, trace::TaskKind::Memcpy);
  ids.a1 = launch(e, stream, {rd(buf(0), kSize), rw(buf(1), kSize)}, 1);
  ids.b1 = launch(e, stream, {rd(buf(0), kSize), rw(buf(2), kSize)}, 1);
  ids.a2 = launch(e, stream, {rw(buf(1), kSize)}, 1);
  ids.b2 = launch(e, stream, {rw(buf(2), kSize)}, 1);
  ids.join = launch(e, stream, {rd(buf(1), kSize), rd(buf(2), kSize), wr(buf(3), kSize)}, 1);
  ids.output = launch(e, stream, {rd(buf(3), kSize)}, 1, trace::TaskKind::Memcpy);
  return ids;
}

class Branches : public ::testing::TestWithParam<StreamHandle> {};

TEST_P(Branches, MemoryPolicyRunsIndependentBranchesUnordered) {
  Engine engine;
  MemoryPolicy::prepare(engine, StreamOrderPolicy::Memory);
  const BranchIds id = branchy_program(engine, GetParam());
  const auto t = MemoryPolicy::trace_of(engine);
  EXPECT_EQ(t.extra.at("dependency_policy"), "memory");
  EXPECT_EQ(deps_of(t, id.a1), Ids{id.input});
  EXPECT_EQ(deps_of(t, id.b1), Ids{id.input});  // not a1: reads of buf 0 do not conflict
  EXPECT_EQ(deps_of(t, id.a2), Ids{id.a1});
  EXPECT_EQ(deps_of(t, id.b2), Ids{id.b1});
  EXPECT_EQ(deps_of(t, id.join), (Ids{id.a2, id.b2}));
  EXPECT_EQ(deps_of(t, id.output), Ids{id.join});
  EXPECT_EQ(reason(t, id.b1, id.input), "memory RAW alloc 0 +0x0..+0x1000");
  EXPECT_EQ(reason(t, id.join, id.b2), "memory RAW alloc 2 +0x0..+0x1000");
  // No path between the branches in either direction.
  for (auto a : {id.a1, id.a2}) {
    for (auto b : {id.b1, id.b2}) {
      EXPECT_FALSE(contains(deps_of(t, std::max(a, b)), std::min(a, b))) << a << " " << b;
    }
  }
}

TEST_P(Branches, KeepPolicyChainsTheStream) {
  Engine engine;
  MemoryPolicy::prepare(engine, StreamOrderPolicy::Keep);
  const BranchIds id = branchy_program(engine, GetParam());
  const auto t = MemoryPolicy::trace_of(engine);
  EXPECT_EQ(t.extra.at("dependency_policy"), "stream-order");
  for (trace::TaskId i = 1; i <= id.output; ++i) {
    EXPECT_TRUE(contains(deps_of(t, i), i - 1)) << "task " << i;
    EXPECT_NE(reason(t, i, i - 1).find("stream"), std::string::npos) << "task " << i;
  }
  EXPECT_EQ(deps_of(t, id.b1), (Ids{id.input, id.a1}));
  EXPECT_EQ(reason(t, id.b1, id.a1), "stream");
}

INSTANTIATE_TEST_SUITE_P(Streams, Branches, ::testing::Values(kS, kN, kLegacyStream, kPerThreadStream),
                         [](const auto& info) {
                           switch (info.param) {
                             case kS: return std::string("Blocking");
                             case kN: return std::string("NonBlocking");
                             case kLegacyStream: return std::string("Legacy");
                             default: return std::string("PerThread");
                           }
                         });

// ---------------------------------------------------------------------------------------------
// Memory conflicts must be complete without stream order.

TEST_F(MemoryPolicy, WriterAfterManyReadersOnOneStreamDependsOnAllOfThem) {
  const int k = 40;
  for (int i = 0; i < k; ++i) launch(engine, kS, {rd(buf(0) + 0x10 * i, 0x100)});
  auto w = launch(engine, kS, {wr(buf(0), 0x400)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, w), range_ids(0, k - 1));
  EXPECT_EQ(reason(t, w, 0), "memory WAR alloc 0 +0x0..+0x100");
  for (int i = 1; i < k; ++i) EXPECT_EQ(deps_of(t, i), Ids{}) << "reader " << i;
}

TEST_F(MemoryPolicy, ReadersOnSeveralStreamsAreAllKept) {
  auto r0 = launch(engine, kS, {rd(buf(0), kSize)});
  auto r1 = launch(engine, kT, {rd(buf(0), kSize)});
  auto r2 = launch(engine, kS, {rd(buf(0), kSize)});
  auto r3 = launch(engine, kT, {rd(buf(0), kSize)});
  auto w = launch(engine, kN, {wr(buf(0), 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, w), (Ids{r0, r1, r2, r3}));
}

TEST_F(MemoryPolicy, WritersAfterWritersAndReadersAfterWriters) {
  auto w0 = launch(engine, kS, {wr(buf(0), kSize)});
  auto w1 = launch(engine, kS, {wr(buf(0) + 0x800, 0x10)});
  auto r = launch(engine, kS, {rd(buf(0), kSize)});
  auto w2 = launch(engine, kS, {wr(buf(0), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, w1), Ids{w0});
  EXPECT_EQ(reason(t, w1, w0), "memory WAW alloc 0 +0x800..+0x810");
  EXPECT_EQ(deps_of(t, r), (Ids{w0, w1}));
  EXPECT_EQ(deps_of(t, w2), (Ids{w0, w1, r}));
  EXPECT_EQ(reason(t, w2, r), "memory WAR alloc 0 +0x0..+0x1000");
}

TEST_F(MemoryPolicy, ReadersBeforeAnOrderingTaskArePrunedBehindIt) {
  auto r0 = launch(engine, kS, {rd(buf(0), kSize)});
  auto r1 = launch(engine, kS, {rd(buf(0), kSize)});
  auto fence = launch(engine, kS, {}, 1, trace::TaskKind::HostFunc);  // not relaxable
  auto r2 = launch(engine, kS, {rd(buf(0), kSize)});
  auto w = launch(engine, kT, {wr(buf(0), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, fence), (Ids{r0, r1}));
  EXPECT_EQ(deps_of(t, r2), Ids{fence});
  EXPECT_EQ(deps_of(t, w), Ids{r2});  // r0, r1 are behind the fence, which is behind r2
}

// ---------------------------------------------------------------------------------------------
// Non-relaxable tasks are boundaries of the stream.

TEST_F(MemoryPolicy, EverythingTaskDependsOnAllPendingTasksAndLaterTasksOnIt) {
  auto a = launch(engine, kS, {rd(buf(0), kSize)});
  auto b = launch(engine, kS, {rd(buf(1), kSize)});
  auto c = launch(engine, kS, {wr(buf(2), kSize)});
  auto all = launch(engine, kS, {everything(Access::Read)});
  auto d = launch(engine, kS, {rd(buf(0), kSize)});
  auto e = launch(engine, kS, {wr(buf(4), kSize)});
  auto f = launch(engine, kS, {wr(buf(0), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, b), Ids{});
  EXPECT_EQ(deps_of(t, c), Ids{});
  EXPECT_EQ(deps_of(t, all), (Ids{a, b, c}));
  EXPECT_EQ(reason(t, all, a), "stream");
  EXPECT_EQ(reason(t, all, c), "stream; memory RAW everything");
  EXPECT_EQ(deps_of(t, d), Ids{all});
  EXPECT_EQ(reason(t, d, all), "stream");
  EXPECT_EQ(deps_of(t, e), Ids{all});
  EXPECT_EQ(reason(t, e, all), "stream; memory WAR everything");
  EXPECT_EQ(deps_of(t, f), (Ids{all, d}));
}

TEST_F(MemoryPolicy, GraphLaunchesAndHostFunctionsAreBoundaries) {
  auto a = launch(engine, kS, {rw(buf(0), kSize)});
  auto b = launch(engine, kS, {rw(buf(1), kSize)});
  auto g = launch(engine, kS, {}, 1, trace::TaskKind::Graph);
  auto c = launch(engine, kS, {rw(buf(2), kSize)});
  auto d = launch(engine, kS, {rw(buf(3), kSize)});
  auto h = launch(engine, kS, {}, 1, trace::TaskKind::HostFunc);
  auto e = launch(engine, kS, {rw(buf(4), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, g), (Ids{a, b}));
  EXPECT_EQ(deps_of(t, c), Ids{g});
  EXPECT_EQ(deps_of(t, d), Ids{g});
  EXPECT_EQ(deps_of(t, h), (Ids{g, c, d}));
  EXPECT_EQ(deps_of(t, e), Ids{h});
}

TEST_F(MemoryPolicy, UnknownKindsAreNotRelaxable) {
  auto a = launch(engine, kS, {rw(buf(0), kSize)});
  auto x = launch(engine, kS, {rw(buf(1), kSize)}, 1, trace::TaskKind::Other);
  auto b = launch(engine, kS, {rw(buf(2), kSize)}, 1, trace::TaskKind::Memset);
  auto c = launch(engine, kS, {rw(buf(3), kSize)}, 1, trace::TaskKind::Memcpy);
  auto t = trace();
  EXPECT_EQ(deps_of(t, x), Ids{a});
  EXPECT_EQ(deps_of(t, b), Ids{x});
  EXPECT_EQ(deps_of(t, c), Ids{x});
}

TEST_F(MemoryPolicy, BoundaryAddsEachPendingTaskOnce) {
  // A boundary every 10 tasks lists only the tasks since the previous boundary.
  for (int round = 0; round < 20; ++round) {
    const trace::TaskId first = static_cast<trace::TaskId>(round * 11);
    for (int i = 0; i < 10; ++i) launch(engine, kS, {rw(buf(i % 8) + 0x100 * round, 0x10)});
    auto g = launch(engine, kS, {}, 1, trace::TaskKind::Graph);
    auto t = engine.build_trace();
    Ids expected = range_ids(first, first + 9);
    if (round > 0) expected.insert(expected.begin(), first - 1);
    ASSERT_EQ(deps_of(t, g), expected) << "round " << round;
  }
}

// ---------------------------------------------------------------------------------------------
// Events.

TEST_F(MemoryPolicy, WaitOrdersEveryLaterTaskOfTheWaitingStreamAfterAllPendingWork) {
  auto a = launch(engine, kS, {rw(buf(0), kSize)});
  auto b = launch(engine, kS, {rw(buf(1), kSize)});
  auto c = launch(engine, kS, {rw(buf(2), kSize)});
  engine.event_recorded(kE, kS, 1);
  auto late = launch(engine, kS, {rw(buf(3), kSize)});  // after the record: not captured
  engine.stream_waited(kN, kE, 1);
  auto n0 = launch(engine, kN, {rw(buf(4), kSize)});
  auto n1 = launch(engine, kN, {rw(buf(5), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, n0), (Ids{a, b, c}));
  EXPECT_EQ(reason(t, n0, b), "event");
  EXPECT_EQ(deps_of(t, n1), (Ids{a, b, c}));  // not n0: unrelated memory, same stream
  (void)late;
}

TEST_F(MemoryPolicy, RecordCapturesTheLastBoundaryAndThePendingTasksAfterIt) {
  auto a = launch(engine, kS, {rw(buf(0), kSize)});
  auto g = launch(engine, kS, {}, 1, trace::TaskKind::Graph);
  auto b = launch(engine, kS, {rw(buf(1), kSize)});
  auto c = launch(engine, kS, {rw(buf(2), kSize)});
  engine.event_recorded(kE, kS, 1);
  engine.stream_waited(kT, kE, 1);
  auto t0 = launch(engine, kT, {rw(buf(4), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, t0), (Ids{g, b, c}));  // a is behind g
  (void)a;
}

TEST_F(MemoryPolicy, LargeWaitedSetIsHandedOnByTheFirstTask) {
  // Above kFrontierLimit waited tasks, the first task after the wait carries them and later
  // tasks of the stream depend on it instead of on all of them again.
  const int k = 40;
  for (int i = 0; i < k; ++i) launch(engine, kS, {rw(buf(i % 8) + 0x10 * i, 0x10)});
  engine.event_recorded(kE, kS, 1);
  engine.stream_waited(kN, kE, 1);
  auto n0 = launch(engine, kN, {rw(buf(0) + 0x800, 0x10)});
  auto n1 = launch(engine, kN, {rw(buf(1) + 0x800, 0x10)});
  auto n2 = launch(engine, kN, {rw(buf(2) + 0x800, 0x10)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, n0), range_ids(0, k - 1));
  EXPECT_EQ(deps_of(t, n1), Ids{n0});
  EXPECT_EQ(reason(t, n1, n0), "stream");
  EXPECT_EQ(deps_of(t, n2), Ids{n0});
}

TEST_F(MemoryPolicy, RepeatedWaitsOnTheSameStreamAddOnlyNewWork) {
  // Fork/join every few tasks: the side stream absorbs each pending task of the main stream once.
  std::size_t edges = 0;
  for (int round = 0; round < 30; ++round) {
    for (int i = 0; i < 5; ++i) launch(engine, kS, {rw(buf(i) + 0x10 * round, 0x10)});
    engine.event_recorded(kE, kS, 1);
    engine.stream_waited(kT, kE, 1);
    launch(engine, kT, {rw(buf(7) + 0x10 * round, 0x10)});
  }
  auto t = trace();
  for (const auto& task : t.tasks) edges += task.deps.size();
  EXPECT_LT(edges, t.tasks.size() * 4) << edges << " edges for " << t.tasks.size() << " tasks";
  // And each side task still follows all main-stream work issued before its wait.
  std::vector<std::vector<bool>> anc(t.tasks.size(), std::vector<bool>(t.tasks.size()));
  for (std::size_t i = 0; i < t.tasks.size(); ++i) {
    for (auto d : t.tasks[i].deps) {
      anc[i][static_cast<std::size_t>(d)] = true;
      for (std::size_t u = 0; u < i; ++u) {
        if (anc[static_cast<std::size_t>(d)][u]) anc[i][u] = true;
      }
    }
  }
  for (int round = 0; round < 30; ++round) {
    const std::size_t side = static_cast<std::size_t>(round * 6 + 5);
    for (std::size_t u = 0; u < side; ++u) {
      if (u % 6 != 5) {
        EXPECT_TRUE(anc[side][u]) << "side task " << side << " main task " << u;
      }
    }
  }
}

TEST_F(MemoryPolicy, EventRecordsAreCheapWithoutWaits) {
  // A record after every task (timing events) must not copy the growing pending set each time:
  // nothing observable, but an event sync only lists the tasks since the previous one.
  for (int i = 0; i < 200; ++i) {
    launch(engine, kS, {rw(buf(i % 8) + 0x10 * (i / 8), 0x10)});
    engine.event_recorded(kE, kS, 1);
    if (i % 10 == 9) engine.host_synced_event(kE, 1, "cuEventSynchronize");
  }
  auto t = trace();
  for (const auto& task : t.tasks) {
    if (task.kind == "sync") {
      EXPECT_LE(task.deps.size(), 11u) << "sync " << task.id;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host syncs.

TEST_F(MemoryPolicy, StreamSyncCoversAllPendingTasks) {
  auto a = launch(engine, kS, {rw(buf(0), kSize)});
  auto b = launch(engine, kS, {rw(buf(1), kSize)});
  auto c = launch(engine, kS, {rw(buf(2), kSize)});
  engine.host_synced_stream(kS, 1, "cuStreamSynchronize");
  const trace::TaskId sync = 3;
  auto d = launch(engine, kS, {rw(buf(3), kSize)});
  auto e = launch(engine, kS, {rw(buf(4), kSize)});
  auto g = launch(engine, kS, {}, 1, trace::TaskKind::Graph);
  auto n = launch(engine, kN, {rw(buf(5), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, sync), (Ids{a, b, c}));
  EXPECT_EQ(reason(t, sync, b), "host-sync");
  EXPECT_EQ(deps_of(t, d), Ids{sync});
  EXPECT_EQ(deps_of(t, e), Ids{sync});  // every relaxable task keeps the host-sync edge
  EXPECT_EQ(deps_of(t, g), (Ids{sync, d, e}));  // a, b, c are behind the sync
  EXPECT_EQ(deps_of(t, n), Ids{sync});
}

TEST_F(MemoryPolicy, ContextSyncCoversPendingTasksOfEveryStream) {
  auto a = launch(engine, kS, {rw(buf(0), kSize)});
  auto b = launch(engine, kS, {rw(buf(1), kSize)});
  auto c = launch(engine, kN, {rw(buf(2), kSize)});
  auto d = launch(engine, kN, {rw(buf(3), kSize)});
  engine.host_synced_context(1, "cuCtxSynchronize");
  auto t = trace();
  EXPECT_EQ(deps_of(t, 4), (Ids{a, b, c, d}));
}

TEST_F(MemoryPolicy, EventSyncCoversThePendingTasksTheRecordCaptured) {
  auto a = launch(engine, kS, {rw(buf(0), kSize)});
  auto b = launch(engine, kS, {rw(buf(1), kSize)});
  engine.event_recorded(kE, kS, 1);
  auto c = launch(engine, kS, {rw(buf(2), kSize)});
  engine.host_synced_event(kE, 1, "cuEventSynchronize");
  auto t = trace();
  EXPECT_EQ(deps_of(t, 3), (Ids{a, b}));
  (void)c;
}

TEST_F(MemoryPolicy, FrequentSyncsDoNotRelistEarlierWork) {
  // A host sync every 10 tasks lists only the 10 tasks since the previous sync.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 10; ++i) launch(engine, kS, {rw(buf(i % 8) + 0x10 * round, 0x10)});
    engine.host_synced_stream(kS, 1, "cuStreamSynchronize");
  }
  auto t = trace();
  std::size_t edges = 0;
  for (const auto& task : t.tasks) {
    edges += task.deps.size();
    if (task.kind == "sync") {
      EXPECT_LE(task.deps.size(), 11u) << "sync " << task.id;
    }
  }
  EXPECT_LT(edges, t.tasks.size() * 3);
}

// ---------------------------------------------------------------------------------------------
// The legacy default stream.

TEST_F(MemoryPolicy, EveryLegacyTaskFollowsAllBlockingWork) {
  auto a0 = launch(engine, kS, {rw(buf(0), kSize)});
  auto a1 = launch(engine, kS, {rw(buf(1), kSize)});
  auto l0 = launch(engine, kLegacyStream, {rw(buf(2), kSize)});
  auto l1 = launch(engine, kLegacyStream, {rw(buf(3), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, l0), (Ids{a0, a1}));
  EXPECT_EQ(reason(t, l0, a1), "default-stream");
  EXPECT_EQ(deps_of(t, l1), (Ids{a0, a1}));  // not l0
}

TEST_F(MemoryPolicy, EveryBlockingTaskFollowsAllLegacyWork) {
  auto l0 = launch(engine, kLegacyStream, {rw(buf(0), kSize)});
  auto l1 = launch(engine, kLegacyStream, {rw(buf(1), kSize)});
  auto a0 = launch(engine, kS, {rw(buf(2), kSize)});
  auto a1 = launch(engine, kS, {rw(buf(3), kSize)});
  auto n0 = launch(engine, kN, {rw(buf(4), kSize)});
  auto l2 = launch(engine, kLegacyStream, {rw(buf(5), kSize)});
  auto a2 = launch(engine, kS, {rw(buf(6), kSize)});
  auto t = trace();
  EXPECT_EQ(deps_of(t, l1), Ids{});
  EXPECT_EQ(deps_of(t, a0), (Ids{l0, l1}));
  EXPECT_EQ(deps_of(t, a1), (Ids{l0, l1}));
  EXPECT_EQ(deps_of(t, n0), Ids{});  // non-blocking
  // l0 and l1 come back through a0's frontier; listing them again is redundant but harmless.
  EXPECT_EQ(deps_of(t, l2), (Ids{l0, l1, a0, a1}));
  EXPECT_EQ(reason(t, l2, a1), "default-stream");
  // a0 and a1 come back through l2 (which waited for them): a2 is behind them through l2 anyway.
  EXPECT_EQ(deps_of(t, a2), (Ids{l0, l1, a0, a1, l2}));
}

// ---------------------------------------------------------------------------------------------
// The policy setting.

TEST(MemoryPolicyApi, NamesRoundTrip) {
  EXPECT_STREQ(stream_order_policy_name(StreamOrderPolicy::Keep), "stream-order");
  EXPECT_STREQ(stream_order_policy_name(StreamOrderPolicy::Memory), "memory");
  EXPECT_EQ(parse_stream_order_policy("memory"), StreamOrderPolicy::Memory);
  EXPECT_EQ(parse_stream_order_policy("stream-order"), StreamOrderPolicy::Keep);
  EXPECT_EQ(parse_stream_order_policy("keep"), StreamOrderPolicy::Keep);
  EXPECT_EQ(parse_stream_order_policy("Memory"), std::nullopt);
  EXPECT_EQ(parse_stream_order_policy(""), std::nullopt);
}

TEST(MemoryPolicyApi, DefaultIsKeep) {
  Engine engine;
  EXPECT_EQ(engine.stream_order_policy(), StreamOrderPolicy::Keep);
  engine.begin_window();
  launch(engine, kS, {rw(buf(0), 0x10)});
  launch(engine, kS, {rw(buf(1), 0x10)});
  auto t = engine.build_trace();
  EXPECT_EQ(t.extra.at("dependency_policy"), "stream-order");
  EXPECT_EQ(deps_of(t, 1), Ids{0});
}

TEST(MemoryPolicyApi, ChangeWhileCapturingAppliesToTheNextWindow) {
  Engine engine;
  engine.begin_window();
  engine.set_stream_order_policy(StreamOrderPolicy::Memory);
  EXPECT_EQ(engine.stream_order_policy(), StreamOrderPolicy::Memory);
  launch(engine, kS, {rw(buf(0), 0x10)});
  launch(engine, kS, {rw(buf(1), 0x10)});
  auto t = engine.build_trace();
  EXPECT_EQ(t.extra.at("dependency_policy"), "stream-order");
  EXPECT_EQ(deps_of(t, 1), Ids{0});
  engine.end_window();
  EXPECT_EQ(engine.build_trace().extra.at("dependency_policy"), "stream-order");
  engine.begin_window();
  launch(engine, kS, {rw(buf(0), 0x10)});
  launch(engine, kS, {rw(buf(1), 0x10)});
  t = engine.build_trace();
  EXPECT_EQ(t.extra.at("dependency_policy"), "memory");
  EXPECT_EQ(deps_of(t, 1), Ids{});
}

}  // namespace
}  // namespace nimble::deps::testing
