// prepare_recording: what nimble run makes of a recorded iteration (the recording's segments and
// matching rule, its streams) and what it refuses, with the reason, on synthetic traces.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "nimble/replayer/run_setup.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/io.hpp"
#include "test_util.hpp"

namespace nimble::replayer {
namespace {

using test::document;
using test::kernel;
using test::parse;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

RecordedIteration recorded() {
  RecordedIteration r;
  r.path = "/tmp/t.json";
  r.first_signature = 0xabc;
  r.fingerprint = 0xf00d;
  return r;
}

// Kernels 0..n-1 in a chain; the i-th on program stream `stream_of(i)` (an index into "streams").
std::string chain(int n, const std::function<int(int)>& stream_of = [](int) { return 0; }) {
  std::string tasks;
  for (int i = 0; i < n; ++i) {
    const std::string deps = i ? "[" + std::to_string(i - 1) + "]" : "[]";
    tasks += (i ? ", " : "") + kernel(i, deps, "\"stream\": " + std::to_string(stream_of(i)));
  }
  return tasks;
}

// prepare_recording of a trace the test does not look at again.
PreparedRecording prepare(trace::Trace trace, const RecordedIteration& r, const RunSetupOptions& o) {
  return prepare_recording(trace, r, o);
}

const char* const kTwoStreams = R"("streams": [{"index": 0, "handle": "0x1", "kind": "legacy"},
                                               {"index": 1, "handle": "0x55aa00", "kind": "created"}])";

TEST(RunSetup, OneStreamReplaysWhereverTheProgramIssuesAndAnyArgumentMayChange) {
  RunSetupOptions o;
  o.piece = 4;
  const PreparedRecording p = prepare(parse(document(chain(10))), recorded(), o);
  ASSERT_TRUE(p.setup) << p.refused_because;
  EXPECT_FALSE(p.own_graphs);
  EXPECT_FALSE(p.own_streams);
  EXPECT_FALSE(p.stream_graphs);
  EXPECT_EQ(p.setup->rule, ArgumentRule::AnyBytes);
  EXPECT_EQ(p.setup->segments.size(), 3u);  // pieces of 4, 4 and 2 ops
  for (const Op& op : p.setup->plan.ops) EXPECT_EQ(op.program_stream, 0u);
  EXPECT_EQ(p.setup->first_signature, 0xabcu);
  EXPECT_EQ(p.setup->fingerprint, 0xf00du);
  EXPECT_EQ(p.setup->name, "/tmp/t.json");
  EXPECT_EQ(p.description().value("ops", 0), 10);
  EXPECT_EQ(p.description().value("arguments", ""), "any bytes may change");
}

// A recording carries how many of its calls came before the one that begins its replay (host
// functions after the sync); one with no such call at all (only host functions and syncs) could
// never begin, and would hide the recordings after it from the hooks' fast path: refused.
TEST(RunSetup, ARecordingWithNoCallThatCanBeginItsReplayIsRefused) {
  RecordedIteration r = recorded();
  r.calls_before_first = 2;
  const PreparedRecording p = prepare(parse(document(chain(3))), r, RunSetupOptions{});
  ASSERT_TRUE(p.setup) << p.refused_because;
  EXPECT_EQ(p.setup->calls_before_first, 2u);
  r.first_signature = 0;
  const PreparedRecording none = prepare(parse(document(chain(3))), r, RunSetupOptions{});
  EXPECT_FALSE(none.setup);
  EXPECT_TRUE(contains(none.refused_because, "no kernel launch, copy, memset or graph launch to begin its replay with"))
      << none.refused_because;
}

// One stream (the default) is planned without running the scheduler: the plan must be the one a
// one-stream schedule gives, on a trace whose branches a wider schedule would spread out.
TEST(RunSetup, OneStreamIsPlannedWithoutTheSchedulerAndGivesTheScheduledPlan) {
  const trace::Trace branches =
      parse(document(kernel(0, "[]") + ", " + kernel(1, "[0]") + ", " + kernel(2, "[0]") + ", " +
                     kernel(3, "[1, 2]") + ", " + kernel(4, "[]") + ", " + kernel(5, "[3, 4]")));
  RunSetupOptions o;
  o.max_streams = 1;
  const PreparedRecording p = prepare(branches, recorded(), o);
  ASSERT_TRUE(p.setup) << p.refused_because;
  trace::Trace scheduled = branches;
  scheduler::Options one;
  one.max_streams = 1;
  scheduler::schedule_trace(scheduled, one);
  const PlanResult expected = build_plan(scheduled);
  ASSERT_TRUE(expected.plan);
  const ReplayPlan& plan = p.setup->plan;
  EXPECT_EQ(plan.streams, expected.plan->streams);
  ASSERT_EQ(plan.ops.size(), expected.plan->ops.size());
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    EXPECT_EQ(plan.ops[i].stream, expected.plan->ops[i].stream) << i;
    EXPECT_EQ(plan.ops[i].waits, expected.plan->ops[i].waits) << i;
    EXPECT_EQ(plan.ops[i].deps, expected.plan->ops[i].deps) << i;
  }
  EXPECT_EQ(p.setup->segments.size(), segments_of(*expected.plan, o.piece, {}).size());
  // Wider, the scheduler runs and spreads the branches.
  o.max_streams = 4;
  o.multi_stream = true;
  const PreparedRecording wide = prepare(branches, recorded(), o);
  ASSERT_TRUE(wide.setup) << wide.refused_because;
  EXPECT_GT(wide.setup->plan.streams, 1);
}

// nimble run writes the trace after planning from it: the file must be the recording, without
// the schedule the plan was made with.
// The per-thread default stream names another stream on each thread: one recording of it from
// several threads is refused (a graph launched from one thread would land on its own stream);
// from one thread it replays.
TEST(RunSetup, ThePerThreadDefaultStreamFromSeveralThreadsIsRefused) {
  const std::string streams = R"("streams": [{"index": 0, "handle": "0x2", "kind": "per-thread"}])";
  auto tasks = [](int second_thread) {
    return kernel(0, "[]", R"("stream": 0, "thread": 7)") + ", " +
           kernel(1, "[0]", R"("stream": 0, "thread": )" + std::to_string(second_thread));
  };
  const PreparedRecording two = prepare(parse(document(tasks(8), streams)), recorded(), RunSetupOptions{});
  EXPECT_FALSE(two.setup);
  EXPECT_TRUE(contains(two.refused_because, "per-thread default stream from 2 threads")) << two.refused_because;
  const PreparedRecording one = prepare(parse(document(tasks(7), streams)), recorded(), RunSetupOptions{});
  EXPECT_TRUE(one.setup) << one.refused_because;
}

TEST(RunSetup, TheTraceIsLeftAsItCameForTheFileWrittenAfterwards) {
  const std::string text = document(chain(6, [](int i) { return i % 2; }), kTwoStreams);
  trace::Trace trace = parse(text);
  const std::string before = trace::dump_trace(trace);
  const PreparedRecording p = prepare_recording(trace, recorded(), RunSetupOptions{});
  ASSERT_TRUE(p.setup) << p.refused_because;
  EXPECT_EQ(trace::dump_trace(trace), before);
  EXPECT_FALSE(trace.schedule.has_value());
  RunSetupOptions wide;
  wide.max_streams = 4;
  EXPECT_TRUE(contains(prepare_recording(trace, recorded(), wide).refused_because, "--max-streams must be 1"))
      << "refused after scheduling";
  EXPECT_EQ(trace::dump_trace(trace), before);
}

TEST(RunSetup, WhereTheProgramRecordedOrWaitedForEventsSegmentsEnd) {
  RecordedIteration r = recorded();
  r.event_points = {3, 7};
  const PreparedRecording p = prepare(parse(document(chain(10))), r, RunSetupOptions{});
  ASSERT_TRUE(p.setup) << p.refused_because;
  ASSERT_EQ(p.setup->segments.size(), 3u);
  EXPECT_EQ(p.setup->segments[1].begin, 3u);
  EXPECT_EQ(p.setup->segments[2].begin, 7u);
}

// Event records and waits every 2 or 3 calls (cuDNN's RNN): a graph launch for every call or two
// cannot pay, and the iteration is refused saying so. Cuts every 4 calls, or a few short graphs in
// a short iteration, are replayed.
TEST(RunSetup, AnIterationCutIntoManyGraphsOfACallOrTwoIsRefusedSayingSo) {
  const auto cut_every = [](std::size_t calls, std::size_t every) {
    RecordedIteration r = recorded();
    for (std::size_t i = every; i < calls; i += every) r.event_points.push_back(i);
    return r;
  };
  const PreparedRecording fragmented = prepare(parse(document(chain(60))), cut_every(60, 2), RunSetupOptions{});
  ASSERT_FALSE(fragmented.setup);
  EXPECT_TRUE(contains(fragmented.refused_because, "into 30 graphs of 2.0 calls on average"))
      << fragmented.refused_because;
  EXPECT_TRUE(contains(fragmented.refused_because, "the program runs its own calls")) << fragmented.refused_because;
  EXPECT_FALSE(prepare(parse(document(chain(60))), cut_every(60, 3), RunSetupOptions{}).setup);

  const PreparedRecording every_fourth = prepare(parse(document(chain(60))), cut_every(60, 4), RunSetupOptions{});
  ASSERT_TRUE(every_fourth.setup) << every_fourth.refused_because;
  EXPECT_EQ(every_fourth.setup->segments.size(), 15u);
  const PreparedRecording short_iteration = prepare(parse(document(chain(14))), cut_every(14, 2), RunSetupOptions{});
  ASSERT_TRUE(short_iteration.setup) << short_iteration.refused_because;  // 7 graphs: too few to judge
  EXPECT_EQ(short_iteration.setup->segments.size(), 7u);
  // Pieces of --piece ops are nimble's own cuts, not the program's: small pieces are replayed.
  RunSetupOptions pieces_of_two;
  pieces_of_two.piece = 2;
  const PreparedRecording pieces = prepare(parse(document(chain(60))), recorded(), pieces_of_two);
  ASSERT_TRUE(pieces.setup) << pieces.refused_because;
  EXPECT_EQ(pieces.setup->segments.size(), 30u);
}

// A 4-byte read of the loss into host memory, or a host sync, as task `id`.
std::string read(long id) {
  return R"({"id": )" + std::to_string(id) + R"(, "kind": "memcpy", "deps": [],
     "copy": {"direction": "DtoH", "src": "0x7f0000000000", "dst": "0x560000009000", "bytes": 4},
     "mem": [{"addr": "0x560000009000", "size": 4, "mode": "w"}]})";
}
std::string sync(long id) { return R"({"id": )" + std::to_string(id) + R"(, "kind": "sync", "deps": [], "sync": "context"})"; }
std::string upload(long id) {
  return R"({"id": )" + std::to_string(id) + R"(, "kind": "memcpy", "deps": [],
     "copy": {"direction": "HtoD", "src": "0x560000001000", "dst": "0x7f0000000000", "bytes": 64},
     "mem": [{"addr": "0x560000001000", "size": 64, "mode": "r"}]})";
}

// Lightning reads its progress bar's metrics 1, 2 or 3 times between two steps (H200): a window
// opened after a sync began with two such reads, and every step that read once more or less fell
// back. The reads at both ends are left to the program, which makes them between two replayed
// iterations: the replay begins with the first call after them, and they come last in the calls
// a plain iteration is checked against. Reads inside the iteration stay (the program runs them in
// place, in order), and an upload that begins it still begins it.
TEST(RunSetup, HostReadsAtTheIterationsEndsAreLeftToTheProgramBetweenIterations) {
  // read, sync, read, sync, upload, k5, read (inside), k7, read, sync
  const std::string tasks = read(0) + ", " + sync(1) + ", " + read(2) + ", " + sync(3) + ", " + upload(4) + ", " +
                            kernel(5, "[]") + ", " + read(6) + ", " + kernel(7, "[]") + ", " + read(8) + ", " + sync(9);
  RecordedIteration r = recorded();
  r.call_signatures = {0xa1, 0xa2, 0x4, 0x5, 0x6, 0x7, 0xa8};  // the hooks' calls: syncs are not calls
  r.first_signature = 0xa1;
  const PreparedRecording p = prepare(parse(document(tasks)), r, RunSetupOptions{});
  ASSERT_TRUE(p.setup) << p.refused_because;
  const std::vector<Op>& ops = p.setup->plan.ops;
  for (std::size_t op : {0, 2, 8}) {
    EXPECT_EQ(ops[op].kind, OpKind::Nop) << op;
    EXPECT_TRUE(ops[op].end_read) << op;
  }
  EXPECT_EQ(ops[4].kind, OpKind::Copy);
  EXPECT_EQ(ops[6].kind, OpKind::Copy);  // inside: matched and run in place as before
  EXPECT_FALSE(ops[6].end_read);
  EXPECT_EQ(p.setup->end_reads, 3u);
  EXPECT_EQ(p.setup->first_signature, 0x4u);  // the upload begins the replay
  EXPECT_EQ(p.setup->call_signatures, (std::vector<std::uint64_t>{0x4, 0x5, 0x6, 0x7, 0xa8, 0xa1, 0xa2}));
  EXPECT_EQ(p.setup->calls_before_first, 3u);  // the calls between two iterations, as recorded
  EXPECT_EQ(p.description().value("end_reads_run_by_program", 0), 3);

  // Where the hooks' calls cannot be matched to the trace's one by one, nothing changes.
  RecordedIteration miscounted = r;
  miscounted.call_signatures.pop_back();
  const PreparedRecording unchanged = prepare(parse(document(tasks)), miscounted, RunSetupOptions{});
  ASSERT_TRUE(unchanged.setup) << unchanged.refused_because;
  EXPECT_EQ(unchanged.setup->end_reads, 0u);
  EXPECT_EQ(unchanged.setup->plan.ops[0].kind, OpKind::Copy);
  EXPECT_EQ(unchanged.setup->first_signature, 0xa1u);
  // Nor in a side exit's recording, entered where it was recorded.
  RecordedIteration side = r;
  side.side_exit = ExitSite{0, 3, 0x9};
  const PreparedRecording side_exit = prepare(parse(document(tasks)), side, RunSetupOptions{});
  ASSERT_TRUE(side_exit.setup) << side_exit.refused_because;
  EXPECT_EQ(side_exit.setup->end_reads, 0u);
  // An iteration of reads alone keeps them: nothing else would be left to replay.
  RecordedIteration reads_only = recorded();
  reads_only.call_signatures = {0xa1, 0xa2};
  const PreparedRecording only = prepare(parse(document(read(0) + ", " + sync(1) + ", " + read(2))), reads_only, RunSetupOptions{});
  ASSERT_TRUE(only.setup) << only.refused_because;
  EXPECT_EQ(only.setup->end_reads, 0u);
  EXPECT_EQ(only.setup->plan.ops[0].kind, OpKind::Copy);
}

TEST(RunSetup, SeveralStreamsReplayEachStretchOnItsOwnStreamOrAreRefusedWhenTurnedOff) {
  const std::string text = document(chain(6, [](int i) { return i < 2 || i > 3 ? 0 : 1; }), kTwoStreams);
  const PreparedRecording p = prepare(parse(text), recorded(), RunSetupOptions{});
  ASSERT_TRUE(p.setup) << p.refused_because;
  EXPECT_TRUE(p.own_streams);
  EXPECT_EQ(p.program_streams, 2u);
  EXPECT_EQ(p.setup->plan.ops[2].program_stream, 0x55aa00u);
  ASSERT_EQ(p.setup->segments.size(), 3u);  // the stream changes at op 2 and back at op 4
  EXPECT_EQ(p.setup->segments[1].begin, 2u);
  EXPECT_EQ(p.setup->segments[2].begin, 4u);
  EXPECT_EQ(p.description().value("program_streams", 0), 2);

  RunSetupOptions off;
  off.multi_stream = false;
  const PreparedRecording q = prepare(parse(text), recorded(), off);
  EXPECT_FALSE(q.setup);
  EXPECT_TRUE(contains(q.refused_because, "NIMBLE_RUN_MULTI_STREAM=0")) << q.refused_because;

  RunSetupOptions wide;
  wide.max_streams = 4;
  EXPECT_TRUE(contains(prepare(parse(text), recorded(), wide).refused_because, "--max-streams must be 1"));
}

TEST(RunSetup, ThePerThreadDefaultStreamAmongSeveralIsRefused) {
  const std::string streams = R"("streams": [{"index": 0, "handle": "0x2", "kind": "per-thread"},
                                             {"index": 1, "handle": "0x55aa00", "kind": "created"}])";
  const PreparedRecording p =
      prepare(parse(document(chain(4, [](int i) { return i % 2; }), streams)), recorded(), RunSetupOptions{});
  EXPECT_FALSE(p.setup);
  EXPECT_TRUE(contains(p.refused_because, "per-thread default stream")) << p.refused_because;
}

// The program's own graph (its nodes recorded, then its launch): its call launches it in place,
// one op of its own segment, between nimble's. The nodes' fields are not nimble's to read (this
// one's launch and arguments are missing: a plan that replayed it would be refused).
TEST(RunSetup, TheProgramsOwnGraphLaunchIsItsOwnCallRunInPlaceBetweenNimblesGraphs) {
  const std::string tasks = kernel(0, "[]") + R"(,
      {"id": 1, "kind": "kernel", "deps": [0], "graph_launch": 3, "graph_node": 0, "mem": [{"everything": true, "mode": "rw"}]},
      {"id": 2, "kind": "memset", "deps": [0], "graph_launch": 3, "graph_node": 1},
      {"id": 3, "kind": "graph_launch", "deps": [1, 2], "graph_exec": "0x55aa00", "graph_nodes": 2}, )" +
                            kernel(4, "[3]");
  const PreparedRecording p = prepare(parse(document(tasks)), recorded(), RunSetupOptions{});
  ASSERT_TRUE(p.setup) << p.refused_because;
  EXPECT_FALSE(p.own_graphs);
  const ReplayPlan& plan = p.setup->plan;
  ASSERT_EQ(plan.ops.size(), 5u);
  EXPECT_EQ(plan.ops[0].kind, OpKind::Kernel);
  EXPECT_EQ(plan.ops[1].kind, OpKind::Nop);
  EXPECT_EQ(plan.ops[2].kind, OpKind::Nop);
  EXPECT_EQ(plan.ops[3].kind, OpKind::Graph);
  EXPECT_EQ(plan.ops[3].graph_exec, 0x55aa00u);
  EXPECT_EQ(plan.ops[4].kind, OpKind::Kernel);
  std::vector<std::pair<std::size_t, std::size_t>> program_runs, nimbles;
  for (const Segment& s : p.setup->segments) (s.program_runs ? program_runs : nimbles).push_back({s.begin, s.end});
  EXPECT_EQ(program_runs, (std::vector<std::pair<std::size_t, std::size_t>>{{3, 4}}));
  EXPECT_EQ(nimbles.front(), (std::pair<std::size_t, std::size_t>{0, 2}));  // the kernel before (and a node: nothing)
  EXPECT_EQ(nimbles.back(), (std::pair<std::size_t, std::size_t>{4, 5}));
}

// An opaque launch (nimble could not look into the graph) is run in place too; an iteration with
// nothing else nimble could launch is left alone for good, with the reason.
TEST(RunSetup, AnIterationOfTheProgramsGraphsAloneMakesNimbleRunStepAside) {
  const std::string graph = R"({"id": 0, "kind": "graph", "deps": [], "graph_exec": "0x55aa00",
                                "mem": [{"everything": true, "mode": "rw"}]})";
  const PreparedRecording alone = prepare(parse(document(graph)), recorded(), RunSetupOptions{});
  EXPECT_FALSE(alone.setup);
  EXPECT_TRUE(alone.own_graphs);
  EXPECT_TRUE(contains(alone.refused_because, "own CUDA graphs and nothing else")) << alone.refused_because;
  const PreparedRecording with_kernel = prepare(parse(document(graph + ", " + kernel(1, "[0]"))), recorded(), RunSetupOptions{});
  ASSERT_TRUE(with_kernel.setup) << with_kernel.refused_because;
  EXPECT_EQ(with_kernel.setup->plan.ops[0].kind, OpKind::Graph);
}

TEST(RunSetup, MemoryFreedWithCuMemFreeInsideTheIterationIsRefusedWithTheReason) {
  const std::string allocations = R"("allocations": [
    {"id": 1, "addr": "0x7f0000100000", "size": 2048, "kind": "device", "allocated_before_task": 0, "freed": true, "freed_before_task": 1}])";
  const std::string tasks = R"({"id": 0, "kind": "memset", "deps": [],
      "memset": {"dst": "0x7f0000100000", "value": 0, "element_size": 1, "bytes": 64},
      "mem": [{"alloc": 1, "offset": 0, "size": 64, "mode": "w"}]}, )" + kernel(1, "[0]");
  const PreparedRecording p = prepare(parse(document(tasks, allocations)), recorded(), RunSetupOptions{});
  EXPECT_FALSE(p.setup);
  EXPECT_TRUE(contains(p.refused_because, "cuMemFree")) << p.refused_because;
}

TEST(RunSetup, ATaskNimbleCannotReplayIsRefusedNamingIt) {
  const std::string tasks = kernel(0, "[]") + R"(, {"id": 1, "kind": "mystery", "deps": [0]})";
  const PreparedRecording p = prepare(parse(document(tasks)), recorded(), RunSetupOptions{});
  EXPECT_FALSE(p.setup);
  EXPECT_TRUE(contains(p.refused_because, "cannot be replayed safely")) << p.refused_because;
  EXPECT_TRUE(contains(p.refused_because, "task 1")) << p.refused_because;
  EXPECT_EQ(p.description().value("refused_because", ""), p.refused_because);
}

}  // namespace
}  // namespace nimble::replayer
