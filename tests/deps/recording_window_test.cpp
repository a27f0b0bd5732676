// The capture window: what is recorded, and what earlier work must not leak into the trace.
#include "deps_test_util.hpp"
#include "nimble/trace/io.hpp"

namespace nimble::deps::testing {
namespace {

constexpr StreamHandle kA = 0xa000;
constexpr StreamHandle kB = 0xb000;
constexpr EventHandle kE = 0xe1;
constexpr std::uint64_t kX = 0x10000;

TEST(Capture, TasksOutsideTheWindowAreNotRecorded) {
  Engine engine;
  engine.stream_created(kA, 0, 0, 1);
  EXPECT_FALSE(engine.capturing());
  EXPECT_EQ(launch(engine, kA), kNoTask);
  engine.host_synced_context(1, "cuCtxSynchronize");
  engine.begin_window();
  EXPECT_TRUE(engine.capturing());
  EXPECT_EQ(launch(engine, kA), 0);
  EXPECT_EQ(launch(engine, kA), 1);
  engine.end_window();
  EXPECT_EQ(launch(engine, kA), kNoTask);
  engine.host_synced_context(1, "cuCtxSynchronize");
  auto t = engine.build_trace();
  ASSERT_EQ(t.tasks.size(), 2u);
  EXPECT_EQ(deps_of(t, 0), Ids{});  // the pre-window task is complete
}

// A window of two launches on stream kA, the second reading what the first wrote into kX.
void record_write_then_read(Engine& engine) {
  engine.stream_created(kA, 0, 0, 1);
  engine.allocated(kX, 0x100, AllocKind::Device, kLegacyStream);
  engine.begin_window();
  launch(engine, kA, {wr(kX, 0x100)});
  launch(engine, kA, {rd(kX, 0x10)});
  engine.end_window();
}

// The recorder builds each window's trace once, taking the tasks: the same trace, not a copy.
TEST(Capture, TakingTheTraceGivesWhatBuildingItGivesAndEmptiesTheWindow) {
  Engine engine;
  record_write_then_read(engine);
  const trace::Trace built = engine.build_trace();
  const trace::Trace taken = engine.take_trace();
  EXPECT_EQ(trace::dump_trace(taken), trace::dump_trace(built));
  ASSERT_EQ(taken.tasks.size(), 2u);
  EXPECT_EQ(deps_of(taken, 1), Ids{0});
  EXPECT_TRUE(engine.build_trace().tasks.empty()) << "the tasks were taken";
  engine.begin_window();  // the next window records as before
  EXPECT_EQ(launch(engine, kA), 0);
  EXPECT_EQ(engine.take_trace().tasks.size(), 1u);
}

// nimble run takes the window's tasks on the program's thread and builds the trace on its own,
// while the program goes on: the trace built later is the one taking it at once gives, whatever
// the engine did meanwhile (a new stream, a freed allocation, the next window's tasks).
TEST(Capture, ATraceTakenNowAndBuiltLaterIsTheWindowsAsItClosed) {
  Engine now, later;
  record_write_then_read(now);
  record_write_then_read(later);
  const trace::Trace expected = now.take_trace();
  const std::function<trace::Trace()> build = later.take_trace_later();
  EXPECT_TRUE(later.build_trace().tasks.empty()) << "the tasks were taken when asked";
  later.stream_created(kB, 0, 0, 1);
  later.freed(kX, kLegacyStream);
  later.begin_window();
  launch(later, kB);
  later.end_window();
  EXPECT_EQ(trace::dump_trace(build()), trace::dump_trace(expected));
}

// A launch's fields stay typed from the hook to the trace (no JSON on the program's thread), and
// the trace written is the one they would make as JSON.
TEST(Capture, KernelFieldsStayTypedIntoTheTrace) {
  Engine engine;
  engine.stream_created(kA, 0, 0, 1);
  engine.begin_window();
  TaskEvent ev;
  ev.stream = kA;
  trace::KernelRecord k;
  k.name = "void k()";
  k.function = 0x10;
  ev.kernel = k;
  ev.detail["api"] = "cuLaunchKernel";
  engine.task(std::move(ev));
  engine.end_window();
  const trace::Trace taken = engine.take_trace();
  ASSERT_EQ(taken.tasks.size(), 1u);
  ASSERT_TRUE(taken.tasks[0].kernel);
  EXPECT_EQ(taken.tasks[0].kernel->name, "void k()");
  EXPECT_FALSE(taken.tasks[0].extra.contains("name"));
  const trace::json written = trace::json::parse(trace::dump_trace(taken));
  const trace::json& task = written["tasks"][0];
  EXPECT_EQ(task["name"], "void k()");
  EXPECT_EQ(task["function"], "0x10");
  EXPECT_EQ(task["api"], "cuLaunchKernel");
}

TEST(Capture, EarlierWorkCreatesNoEdges) {
  Engine engine;
  engine.stream_created(kA, 0, 0, 1);
  engine.stream_created(kB, 0x1, 0, 1);
  engine.allocated(kX, 0x100, AllocKind::Device, kLegacyStream);
  launch(engine, kA, {wr(kX, 0x100)});
  engine.event_recorded(kE, kA, 1);  // refers to pre-window work
  launch(engine, kLegacyStream, {everything()});
  engine.begin_window();
  engine.stream_waited(kB, kE, 1);
  auto b0 = launch(engine, kB, {rd(kX, 0x100)});
  auto a0 = launch(engine, kA, {rd(kX, 0x10)});
  auto t = engine.build_trace();
  expect_well_formed(t);
  EXPECT_EQ(deps_of(t, b0), Ids{});
  EXPECT_EQ(deps_of(t, a0), Ids{});
}

TEST(Capture, BeginStartsAFreshRecording) {
  Engine engine;
  engine.stream_created(kA, 0, 0, 1);
  engine.begin_window();
  launch(engine, kA, {wr(kX, 0x10)});
  engine.event_recorded(kE, kA, 1);
  engine.host_synced_context(1, "cuCtxSynchronize");
  engine.end_window();
  engine.begin_window();
  engine.stream_waited(kB, kE, 1);
  auto b0 = launch(engine, kB, {rd(kX, 0x10)});
  auto a0 = launch(engine, kA);
  auto t = engine.build_trace();
  expect_well_formed(t);
  ASSERT_EQ(t.tasks.size(), 2u);
  EXPECT_EQ(b0, 0);
  EXPECT_EQ(deps_of(t, b0), Ids{});
  EXPECT_EQ(deps_of(t, a0), Ids{});
  EXPECT_EQ(task_of(t, b0).stream, 0);  // stream indices restart too
}

TEST(Capture, BeginWhileCapturingKeepsTheRecording) {
  Engine engine;
  engine.begin_window();
  launch(engine, kA);
  engine.begin_window();
  launch(engine, kA);
  auto t = engine.build_trace();
  ASSERT_EQ(t.tasks.size(), 2u);
  EXPECT_EQ(deps_of(t, 1), Ids{0});
}

TEST(Capture, AllocationsLiveDuringTheWindowAreListed) {
  Engine engine;
  engine.allocated(0x1000, 0x10, AllocKind::Device, kLegacyStream);  // 0: freed before
  engine.allocated(0x2000, 0x20, AllocKind::Managed, kLegacyStream);  // 1: live at begin
  engine.allocated(0x3000, 0x30, AllocKind::Device, kLegacyStream);  // 2: freed inside
  engine.freed(0x1000, kLegacyStream);
  engine.begin_window();
  launch(engine, kA);
  engine.allocated(0x4000, 0x40, AllocKind::Async, kA);  // 3: allocated inside
  engine.freed(0x3000, kLegacyStream);
  launch(engine, kA);
  engine.end_window();
  engine.allocated(0x5000, 0x50, AllocKind::Device, kLegacyStream);  // 4: after
  engine.freed(0x2000, kLegacyStream);  // after the window: still live as far as the trace goes
  auto t = engine.build_trace();
  const auto& allocs = t.extra.at("allocations");
  ASSERT_EQ(allocs.size(), 3u);
  EXPECT_EQ(allocs[0], trace::json::parse(
                           R"({"id":1,"addr":"0x2000","size":32,"kind":"managed","stream":"0x1"})"));
  EXPECT_EQ(allocs[1].at("id"), 2);
  EXPECT_EQ(allocs[1].at("freed"), true);
  EXPECT_EQ(allocs[1].at("freed_before_task"), 1);
  EXPECT_EQ(allocs[2].at("id"), 3);
  EXPECT_EQ(allocs[2].at("kind"), "async");
  EXPECT_EQ(allocs[2].at("stream"), "0xa000");  // the handle the allocation was made on
  EXPECT_EQ(allocs[2].at("allocated_before_task"), 1);
  EXPECT_FALSE(allocs[2].contains("freed"));
}

TEST(Capture, EmptyWindowGivesAnEmptyTrace) {
  Engine engine;
  engine.begin_window();
  engine.end_window();
  auto t = engine.build_trace();
  EXPECT_TRUE(t.tasks.empty());
  EXPECT_TRUE(t.extra.at("streams").empty());
  EXPECT_TRUE(t.extra.at("allocations").empty());
}

}  // namespace
}  // namespace nimble::deps::testing
