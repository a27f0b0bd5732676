// cuEventRecord / cuStreamWaitEvent.
#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr StreamHandle kA = 0xa000;
constexpr StreamHandle kB = 0xb000;
constexpr StreamHandle kN = 0xc000;  // non-blocking
constexpr EventHandle kE = 0xe1;
constexpr EventHandle kF = 0xe2;

class Events : public ::testing::Test {
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

// Where records and waits fell among the window's tasks (nimble run ends a graph there); a new
// window starts a new list, and records outside any window are not listed.
TEST_F(Events, RecordsAndWaitsInTheWindowAreListedWithTheTasksBeforeThem) {
  engine.event_recorded(kE, kA, 1);
  launch(engine, kA);
  launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  engine.stream_waited(kB, kE, 1);
  launch(engine, kB);
  EXPECT_EQ(engine.event_points(), (std::vector<std::size_t>{0, 2, 2}));
  engine.end_window();
  engine.event_recorded(kF, kA, 1);
  EXPECT_EQ(engine.event_points().size(), 3u);
  engine.begin_window();
  launch(engine, kA);
  engine.stream_waited(kA, kF, 1);
  EXPECT_EQ(engine.event_points(), (std::vector<std::size_t>{1}));
}

TEST_F(Events, WaitOrdersTheNextTaskAfterTheRecordedWork) {
  auto a0 = launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  engine.stream_waited(kB, kE, 1);
  auto b0 = launch(engine, kB);
  auto b1 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{a0});
  EXPECT_EQ(reason(t, b0, a0), "event");
  EXPECT_EQ(deps_of(t, b1), Ids{b0});  // only the next task carries the wait
}

TEST_F(Events, RecordCapturesWorkSoFarOnly) {
  auto a0 = launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  auto a1 = launch(engine, kA);
  engine.stream_waited(kB, kE, 1);
  auto b0 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{a0});
  (void)a1;
}

TEST_F(Events, ReRecordReplacesTheCapture) {
  auto a0 = launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  auto n0 = launch(engine, kN);
  engine.event_recorded(kE, kN, 1);  // now stands for n0 only
  engine.stream_waited(kB, kE, 1);
  auto b0 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{n0});
  (void)a0;
}

TEST_F(Events, WaitOnUnrecordedEventAddsNothing) {
  launch(engine, kA);
  engine.stream_waited(kB, kF, 1);
  auto b0 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{});
}

TEST_F(Events, WaitUsesTheRecordAtTheTimeOfTheWait) {
  engine.stream_waited(kB, kE, 1);  // kE not recorded yet
  launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  auto b0 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{});
}

TEST_F(Events, RecordOnIdleStreamCapturesNothing) {
  engine.event_recorded(kE, kA, 1);
  engine.stream_waited(kB, kE, 1);
  auto b0 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{});
}

TEST_F(Events, PendingWaitsTravelOnThroughLaterRecords) {
  // n0 -> (E) -> wait on B -> (F recorded on B before any B task) -> wait on A -> a0.
  auto n0 = launch(engine, kN);
  engine.event_recorded(kE, kN, 1);
  engine.stream_waited(kB, kE, 1);
  engine.event_recorded(kF, kB, 1);
  engine.stream_waited(kA, kF, 1);
  auto a0 = launch(engine, kA);
  auto t = trace();
  EXPECT_EQ(deps_of(t, a0), Ids{n0});
}

TEST_F(Events, WaitsOnSeveralEventsAllApply) {
  auto a0 = launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  auto n0 = launch(engine, kN);
  engine.event_recorded(kF, kN, 1);
  auto b0 = launch(engine, kB);
  engine.stream_waited(kB, kE, 1);
  engine.stream_waited(kB, kF, 1);
  auto b1 = launch(engine, kB);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b1), (Ids{a0, n0, b0}));
  EXPECT_EQ(reason(t, b1, b0), "stream");
  EXPECT_EQ(reason(t, b1, n0), "event");
}

TEST_F(Events, EventWaitOnPerThreadStreamUsesTheCallingThread) {
  auto a0 = launch(engine, kA);
  engine.event_recorded(kE, kA, 1);
  engine.stream_waited(kPerThreadStream, kE, 2);
  auto p1 = launch(engine, kPerThreadStream, {}, 1);
  auto p2 = launch(engine, kPerThreadStream, {}, 2);
  auto t = trace();
  EXPECT_EQ(deps_of(t, p1), Ids{});
  EXPECT_EQ(deps_of(t, p2), Ids{a0});
}

TEST_F(Events, EventRecordedOnLegacyCoversBlockingWork) {
  // The record is legacy-stream work, so it waits for a0; b0 on a blocking stream waits for it.
  auto a0 = launch(engine, kA);
  engine.event_recorded(kE, kLegacyStream, 1);
  auto b0 = launch(engine, kB);
  engine.stream_waited(kN, kE, 1);
  auto n0 = launch(engine, kN);
  auto t = trace();
  EXPECT_EQ(deps_of(t, b0), Ids{a0});
  EXPECT_EQ(reason(t, b0, a0), "default-stream");
  EXPECT_EQ(deps_of(t, n0), Ids{a0});
}

TEST_F(Events, WaitOnLegacyStreamReachesBlockingStreams) {
  auto n0 = launch(engine, kN);
  engine.event_recorded(kE, kN, 1);
  engine.stream_waited(kLegacyStream, kE, 1);
  auto a0 = launch(engine, kA);
  auto t = trace();
  EXPECT_EQ(deps_of(t, a0), Ids{n0});
  EXPECT_EQ(reason(t, a0, n0), "default-stream");
}

}  // namespace
}  // namespace nimble::deps::testing
