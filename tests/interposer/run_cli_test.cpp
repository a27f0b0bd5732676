// `nimble run` end to end with the fake driver: refusals, and the whole in-process path (hooks,
// short-circuit, graphs, node updates, fall-back) on a single-stream loop, counted by the fake
// driver (launches as work, as captured graph nodes, graph launches).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "nimble/trace/io.hpp"
#include "nimble/trace/recorded.hpp"
#include "test_support.hpp"

namespace nimble::test {
namespace {

// Without the payoff trial: these tests count what the mechanics do with every later iteration.
// The program waits for each recording's graphs (NIMBLE_RUN_BACKGROUND=0, whatever the default),
// so that replay begins at a known iteration; building them while the program runs on has tests of
// its own (kBuildInBackground).
const char* const kWaitForGraphs = "NIMBLE_RUN_BACKGROUND=0";
const char* const kBuildInBackground = "NIMBLE_RUN_BACKGROUND=1";
// The fake programs' steps are a few calls long, below nimble run's minimum
// (ALoopShorterThanTheMinimumIsLeftToTheProgramAndTheSummarySaysSo runs without this).
const char* const kShortStepsRecorded = "NIMBLE_RUN_ITERATION_SHORTEST=1";
// nimble run's own minimum iteration length, not the fake programs' one.
std::vector<std::string> with_default_minimum(std::vector<std::string> env) {
  env.erase(std::remove(env.begin(), env.end(), std::string(kShortStepsRecorded)), env.end());
  return env;
}
// The process guard would pause nimble run for spans of these programs: off, so that they count
// what replay does with every iteration (its own tests turn it on: kGuardOn).
const char* const kNoGuard = "NIMBLE_RUN_GUARD=0";
// `env` with each of `settings` in place of the same variable's value there (the first one of a
// name is the one a program sees).
std::vector<std::string> overridden(std::vector<std::string> env, const std::vector<std::string>& settings) {
  for (const std::string& setting : settings) {
    const std::string name = setting.substr(0, setting.find('=') + 1);
    env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name, 0) == 0; }), env.end());
    env.push_back(setting);
  }
  return env;
}
// `trial`: the payoff trial on, as nimble run's default.
std::vector<std::string> fake_driver_env(bool graphs, bool trial = false) {
  std::vector<std::string> env = {"NIMBLE_LIBCUDA=" + fake_driver_path(), "NIMBLE_CUPTI=0", kWaitForGraphs,
                                  kShortStepsRecorded, kNoGuard};
  if (!trial) env.push_back("NIMBLE_RUN_TRIAL=0");
  if (graphs) env.push_back("FAKE_DRIVER_GRAPHS=1");
  return env;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

// The overhead probe under nimble run, its iteration 1 bracketed by the profiler API, with the trial
// on (unlike fake_driver_env) and `settings`; its summary must hold one recording.
struct ProbeRun {
  RunResult result;
  nlohmann::json summary;
};
ProbeRun run_overhead_probe(const std::string& dir, const std::vector<std::string>& settings,
                            const std::string& mode = "overhead") {
  const std::vector<std::string> env = overridden(fake_driver_env(true, /*trial=*/true), settings);
  ProbeRun run{run_with_env(env, {NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi", "--iteration", "1", "-o",
                                  dir + "/t.json", "--", probe_path(), mode}),
               nlohmann::json()};
  EXPECT_EQ(run.result.exit_code, 0) << run.result.output;
  run.summary = read_json(dir + "/t.run.json");
  EXPECT_TRUE(run.summary.is_object()) << dir << "/t.run.json is missing or not JSON";
  if (run.summary.is_object()) {
    EXPECT_EQ(run.summary.value("recordings", nlohmann::json::array()).size(), 1u) << run.summary.dump(2);
  }
  return run;
}

// The recordings of iterations (side exits' apart: side_exits_by_calls), by their calls per
// iteration: the probe's steps end with a loss read (a copy to the host and a sync), which runs
// between two replayed iterations and is not one of their calls (end_reads.hpp).
std::map<int, nlohmann::json> recordings_by_calls(const nlohmann::json& summary, bool side_exits = false) {
  std::map<int, nlohmann::json> by_calls;
  for (const nlohmann::json& rec : summary.value("recordings", nlohmann::json::array())) {
    if (rec.contains("side_exit_of") == side_exits) by_calls[rec.value("calls", 0)] = rec;
  }
  return by_calls;
}
std::map<int, nlohmann::json> side_exits_by_calls(const nlohmann::json& summary) { return recordings_by_calls(summary, true); }

std::string r_dump(const std::map<int, nlohmann::json>& recordings) {
  std::string out;
  for (const auto& [calls, rec] : recordings) out += rec.dump() + "\n";
  return out;
}

// The probe's "kernels_run=K ..." line as numbers.
std::map<std::string, int> counts(const std::string& output, const std::string& first = "kernels_run=") {
  std::map<std::string, int> out;
  const auto at = output.find(first);
  if (at == std::string::npos) return out;
  std::istringstream line(output.substr(at, output.find('\n', at) - at));
  std::string field;
  while (line >> field) {
    const auto eq = field.find('=');
    out[field.substr(0, eq)] = std::stoi(field.substr(eq + 1));
  }
  return out;
}

// `argv` followed by the probe and its `mode`, which may be followed by the probe's arguments,
// after spaces.
std::vector<std::string> with_probe(std::vector<std::string> argv, const std::string& mode) {
  argv.push_back(probe_path());
  std::istringstream words(mode);
  for (std::string word; words >> word;) argv.push_back(word);
  return argv;
}

RunResult nimble_run(const std::string& out, const std::string& mode, bool graphs = true,
                     const std::vector<std::string>& extra_env = {}) {
  const std::vector<std::string> env = overridden(fake_driver_env(graphs), extra_env);
  return run_with_env(env, with_probe({NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi", "--iteration", "1",
                                       "-o", out, "--"},
                                      mode));
}

// nimble run with the automatic range (no capture marks), the fake driver's graphs and no trial
// (with `trial`, the trial on).
RunResult auto_run(const std::string& out, const std::string& mode, const std::vector<std::string>& extra_env = {},
                   bool trial = false) {
  const std::vector<std::string> env = overridden(fake_driver_env(true, trial), extra_env);
  return run_with_env(env, with_probe({NIMBLE_TEST_CLI, "run", "-o", out, "--"}, mode));
}

// The probe run plainly (nimble preloaded, idle): its output.
RunResult plain_run(const std::string& mode, const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> env = {"LD_PRELOAD=" + preload_path(), "NIMBLE_LIBCUDA=" + fake_driver_path()};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  return run_with_env(env, with_probe({}, mode));
}

// The digest of every kernel the fake driver ran, with its arguments, in order ("work=...").
std::string work_of(const std::string& output) {
  const auto at = output.find("work=");
  return at == std::string::npos ? "none" : output.substr(at + 5, 16);
}

// nimble run on probe `mode` (automatic range, `extra_env`), its trace DIR/NAME.json: it must exit 0
// and do a plain run's work; returns its summary (null when missing).
nlohmann::json auto_run_summary(const std::string& dir, const std::string& name, const std::string& mode,
                                const std::vector<std::string>& extra_env = {}) {
  const RunResult r = auto_run(dir + "/" + name + ".json", mode, extra_env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run(mode).output));
  nlohmann::json summary = read_json(dir + "/" + name + ".run.json");
  EXPECT_TRUE(summary.is_object()) << r.output;
  return summary;
}

// `nimble run` on a probe loop that completed: its output, its summary file and the driver counts.
struct Loop {
  RunResult result;
  nlohmann::json summary;
  std::map<std::string, int> counts;
};

Loop run_loop(const std::string& mode) {
  const std::string dir = temp_dir();
  Loop loop{nimble_run(dir + "/trace.json", mode), read_json(dir + "/trace.run.json"), {}};
  loop.counts = counts(loop.result.output);
  EXPECT_EQ(loop.result.exit_code, 0) << loop.result.output;
  EXPECT_TRUE(loop.summary.is_object()) << loop.result.output;
  EXPECT_FALSE(loop.counts.empty()) << loop.result.output;
  return loop;
}

TEST(RunCommand, LaterIterationsRunAsGraphsWithThisIterationsScalars) {
  const auto [r, summary, c] = run_loop("loop");
  if (HasFailure()) return;
  // Iteration 0 runs before the recording, iteration 1 is recorded, 2..7 are replayed.
  EXPECT_EQ(summary.value("iterations_replayed", 0), 6) << summary.dump(2);
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary.dump(2);
  // The program's own HtoD copies; its DtoH read at each iteration's end runs between iterations.
  EXPECT_EQ(summary.value("host_copies_run_in_place", 0), 6);
  EXPECT_EQ(c.at("kernels_run"), 4) << r.output;   // 2 kernels x iterations 0 and 1 only
  EXPECT_EQ(c.at("memsets_run"), 2) << r.output;
  EXPECT_EQ(c.at("graph_launches"), 6) << r.output;  // one graph per replayed iteration (3 ops < a piece of 8)
  EXPECT_EQ(c.at("captured"), 3) << r.output;        // built once: scale, memset, fill
  // The scalar and the memset value change every iteration: both nodes updated each time.
  EXPECT_EQ(c.at("node_updates"), 12) << r.output;
  EXPECT_EQ(summary["graphs"].value("node_updates", 0), 12) << summary.dump(2);
  EXPECT_EQ(summary["graphs"].value("launches", 0), 6) << summary.dump(2);
  const nlohmann::json& most = summary["graphs"]["most_updated"];
  ASSERT_EQ(most.size(), 2u) << summary.dump(2);  // the scalar's kernel and the memset, once per replay
  EXPECT_EQ(most[0].value("updates", 0), 6);
  EXPECT_EQ(most[1].value("updates", 0), 6);
  EXPECT_NE(r.output.find("nimble run: 6 iteration(s) replayed"), std::string::npos) << r.output;
  // Every kernel ran with the arguments a plain run gives it, the changing scalar included.
  EXPECT_EQ(work_of(r.output), work_of(plain_run("loop").output));
}

// An event recorded between kernels ends a graph there (the work it stands for is on the GPU
// when the program records it again), a host function is the program's own call in its place,
// and querying the event needs nothing held back: every later iteration is replayed.
TEST(RunCommand, EventsAndHostFunctionsInsideTheIterationAreReplayedAround) {
  const auto [r, summary, c] = run_loop("loop-events");
  if (HasFailure()) return;
  EXPECT_EQ(summary.value("iterations_replayed", 0), 6) << summary.dump(2) << r.output;
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary.dump(2);
  EXPECT_EQ(c.at("kernels_run"), 4) << r.output;       // iterations 0 and 1 only
  // Three graphs per replayed iteration: the kernel before the event; the memset; the kernel after
  // the query (a completed query is a host sync of the trace: a segment ends there too).
  EXPECT_EQ(c.at("graph_launches"), 18) << r.output;
  EXPECT_NE(r.output.find("host_functions=8"), std::string::npos) << r.output;  // once per iteration
  EXPECT_EQ(work_of(r.output), work_of(plain_run("loop-events").output));
}

TEST(RunCommand, AMismatchMidIterationIssuesTheHeldBackCallsAndReArms) {
  const auto [r, summary, c] = run_loop("loop-change");
  if (HasFailure()) return;
  EXPECT_EQ(summary.value("iterations_replayed", 0), 5) << summary.dump(2);  // 2, 3, 4, 6, 7
  ASSERT_EQ(summary["fallbacks"].size(), 1u) << summary.dump(2);
  EXPECT_NE(summary["fallbacks"][0].value("reason", "").find("launch shape changed: grid 2x1x1 -> 4x1x1"), std::string::npos)
      << summary.dump(2);
  // Iteration 5: scale and the memset were held back, then issued in order, then fill ran itself.
  EXPECT_EQ(c.at("kernels_run"), 4 + 2) << r.output;
  EXPECT_EQ(c.at("memsets_run"), 2 + 1) << r.output;
  EXPECT_EQ(c.at("graph_launches"), 5) << r.output;
}

// The fake cuDNN's cudnnBackendExecute, with a variant pack built every iteration around an input
// that alternates between two buffers: once each set of inputs has been seen to launch the same
// work twice, the library is no longer called, and the kernels that run are a plain run's. When
// NIMBLE_RUN_SKIP_CALLS leaves cuDNN out it is always called.
TEST(RunCommand, LibraryCallsWithKnownInputsAreSkippedAndTheWorkIsAPlainRunsWork) {
  const std::string dir = temp_dir();
  const RunResult r = nimble_run(dir + "/trace.json", "library");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto c = counts(r.output);
  const nlohmann::json summary = read_json(dir + "/trace.run.json");
  ASSERT_TRUE(summary.contains("library")) << summary.dump(2);
  const nlohmann::json& execute = summary["library"]["calls"]["cudnnBackendExecute"];
  EXPECT_EQ(summary.value("iterations_replayed", 0), 38) << summary.dump(2);
  // Iterations 0 and 1 (recorded) run as they are; 2 and 4 learn the other buffer, 3 confirms
  // the recorded one; from iteration 5 on every call is skipped.
  EXPECT_EQ(execute.value("calls", 0), 38) << summary.dump(2);
  EXPECT_EQ(execute.value("skipped", 0), 35) << summary.dump(2);
  EXPECT_EQ(c.at("executes"), 5) << r.output;
  EXPECT_TRUE(summary["library"]["never_skipped"].empty());
  EXPECT_EQ(work_of(r.output), work_of(plain_run("library").output));
  EXPECT_NE(r.output.find("nimble run: cudnnBackendExecute: 35 of 38 calls skipped"), std::string::npos) << r.output;

  const RunResult off = nimble_run(dir + "/off.json", "library", true, {"NIMBLE_RUN_SKIP_LIBRARY=0"});
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(counts(off.output).at("executes"), 40) << off.output;
  EXPECT_EQ(work_of(off.output), work_of(r.output));

  const RunResult cublaslt_only = nimble_run(dir + "/lt.json", "library", true, {"NIMBLE_RUN_SKIP_CALLS=cublasLtMatmul"});
  ASSERT_EQ(cublaslt_only.exit_code, 0) << cublaslt_only.output;
  EXPECT_EQ(counts(cublaslt_only.output).at("executes"), 40) << cublaslt_only.output;
  EXPECT_EQ(read_json(dir + "/lt.run.json")["library"]["calls"]["cudnnBackendExecute"].value("skipped", -1), 0);
  EXPECT_EQ(work_of(cublaslt_only.output), work_of(r.output));
}

// With state no argument shows (a count of executions in the kernel's arguments), the recorded
// inputs launch other bytes the next time: the call site is never skipped, and nothing differs.
TEST(RunCommand, LibraryStateTheKeyCannotSeeIsNoticedAndTheCallIsNeverSkipped) {
  const std::string dir = temp_dir();
  const RunResult r = nimble_run(dir + "/trace.json", "library", true, {"FAKE_CUDNN_HIDDEN_STATE=1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/trace.run.json");
  EXPECT_EQ(summary["library"]["calls"]["cudnnBackendExecute"].value("skipped", -1), 0) << summary.dump(2);
  ASSERT_EQ(summary["library"]["never_skipped"].size(), 1u) << summary.dump(2);
  EXPECT_NE(summary["library"]["never_skipped"][0].get<std::string>().find("the same inputs launched other argument bytes"),
            std::string::npos);
  EXPECT_EQ(counts(r.output).at("executes"), 40) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("library", {"FAKE_CUDNN_HIDDEN_STATE=1"}).output));
}

// A library call that runs its kernel on a stream of its own, ordered with the caller's by its own
// event records and waits (cuDNN does this for some backward convolutions): a skipped call would
// make none of them, and its kernel would race with the program's (wrong results on the H200). The
// recording shows the order across streams; the call always runs, the summary says why, and the
// iterations are still replayed.
TEST(RunCommand, ALibraryCallOrderedByItsOwnEventsIsNeverSkipped) {
  const std::string dir = temp_dir();
  const RunResult r = nimble_run(dir + "/trace.json", "library", true, {"FAKE_CUDNN_FORK=1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/trace.run.json");
  EXPECT_GE(summary.value("iterations_replayed", 0), 30) << summary.dump(2);
  EXPECT_EQ(counts(r.output).at("executes"), 40) << r.output;
  EXPECT_EQ(summary["library"]["calls"]["cudnnBackendExecute"].value("skipped", -1), 0) << summary.dump(2);
  const nlohmann::json& ruled_out = summary["library"]["never_skippable"];
  ASSERT_EQ(ruled_out.size(), 1u) << summary.dump(2);
  EXPECT_NE(ruled_out[0].get<std::string>().find("ordered against another stream's work by events"), std::string::npos)
      << ruled_out;
  EXPECT_NE(r.output.find("nimble run: never skipped: cudnnBackendExecute at task"), std::string::npos) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("library", {"FAKE_CUDNN_FORK=1"}).output));
}

// Tensors from a stream-ordered pool (PyTorch's backend:cudaMallocAsync): allocations run in
// place, and a free made while the calls that use the memory are held back waits until they are
// launched. The fake pool hands a freed block out at once and counts kernels that ran with freed
// memory: none may.
TEST(RunCommand, PoolTensorsAreReplayedAndFreedOnlyAfterTheWorkThatUsesThem) {
  const std::string dir = temp_dir();
  const RunResult r = nimble_run(dir + "/trace.json", "pool");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/trace.run.json");
  EXPECT_EQ(summary.value("iterations_replayed", 0), 10) << summary.dump(2);
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary.dump(2);
  EXPECT_EQ(summary.value("frees_held_back", 0), 20) << summary.dump(2);  // the temporary and the last input
  const auto c = counts(r.output);
  ASSERT_FALSE(c.empty()) << r.output;
  EXPECT_EQ(c.at("use_after_free"), 0) << r.output;
  EXPECT_EQ(c.at("graph_launches"), 10) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("pool").output));
}

// By default an iteration over two streams ordered by the program's own events is replayed, each
// stream's stretch as a graph on that stream (the fake driver's digest counts the stream every
// kernel ran on), and the program's event records and waits run in place. With
// NIMBLE_RUN_MULTI_STREAM=0 the iteration is refused and the program runs as it is.
TEST(RunCommand, AnIterationOverTwoStreamsReplaysEachStretchOnItsOwnStream) {
  const std::string dir = temp_dir();
  const std::string plain = work_of(plain_run("loop-streams").output);
  const RunResult r = nimble_run(dir + "/s.json", "loop-streams");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/s.run.json");
  EXPECT_EQ(summary.value("iterations_replayed", 0), 6) << summary.dump(2) << r.output;
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary.dump(2);
  EXPECT_EQ(summary["setup"].value("program_streams", 0), 2) << summary.dump(2);
  const auto c = counts(r.output);
  ASSERT_FALSE(c.empty()) << r.output;
  EXPECT_EQ(c.at("kernels_run"), 6) << r.output;       // iterations 0 and 1 only
  EXPECT_EQ(c.at("graph_launches"), 18) << r.output;   // s1, s2, s1 in each replayed iteration
  EXPECT_EQ(work_of(r.output), plain) << r.output;

  const RunResult off = nimble_run(dir + "/off.json", "loop-streams", true, {"NIMBLE_RUN_MULTI_STREAM=0"});
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_NE(off.output.find("the iteration used 2 streams"), std::string::npos) << off.output;
  EXPECT_EQ(counts(off.output).at("graph_launches"), 0) << off.output;
  EXPECT_EQ(work_of(off.output), plain) << off.output;

  // The per-thread default stream is another stream on every thread: not replayed across streams.
  const RunResult pt = nimble_run(dir + "/pt.json", "loop-streams-per-thread");
  ASSERT_EQ(pt.exit_code, 0) << pt.output;
  EXPECT_NE(pt.output.find("one of them a per-thread default stream"), std::string::npos) << pt.output;
  EXPECT_EQ(counts(pt.output).at("graph_launches"), 0) << pt.output;
  EXPECT_EQ(work_of(pt.output), work_of(plain_run("loop-streams-per-thread").output)) << pt.output;
}

// A collective (an NCCL-named kernel) inside a replayed iteration is always the program's own
// call, between graphs: every rank issues its collectives itself, in its order, whether it
// replays or falls back, so ranks cannot disagree about a collective (no deadlock).
TEST(RunCommand, CollectivesAreAlwaysTheProgramsOwnCallsBetweenGraphs) {
  const std::string dir = temp_dir();
  const RunResult r = nimble_run(dir + "/c.json", "loop-collective");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/c.run.json");
  EXPECT_EQ(summary.value("iterations_replayed", 0), 6) << summary.dump(2) << r.output;
  EXPECT_EQ(summary.value("collectives_run_in_place", 0), 6) << summary.dump(2);
  const auto c = counts(r.output);
  ASSERT_FALSE(c.empty()) << r.output;
  EXPECT_EQ(c.at("collectives_run"), 8) << r.output;  // every iteration's, replayed or not, by the program
  // s1; s2's fill; (the collective, by the program); s2's memset; s1: four graphs per iteration.
  EXPECT_EQ(c.at("graph_launches"), 24) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("loop-collective").output)) << r.output;
  // The collective passed 16 bytes under its 4 KB argument (as NCCL does): the trace holds the 4 KB,
  // zeros after the 16, says so, and is valid; only the pointer in the 16 bytes was found.
  const trace::LoadResult loaded = trace::load_trace(dir + "/c.json");
  ASSERT_TRUE(loaded.trace) << loaded.diagnostics.format(dir + "/c.json");
  const trace::Task* collective = nullptr;
  for (const trace::Task& t : loaded.trace->tasks) {
    if (t.kind == "kernel" && trace::read_kernel(t).name.value_or("").rfind("ncclDevKernel", 0) == 0) collective = &t;
  }
  ASSERT_TRUE(collective) << r.output;
  const trace::KernelRecord k = trace::read_kernel(*collective);
  EXPECT_EQ(k.args.bytes.size(), 4096u);
  EXPECT_EQ(k.args.passed_bytes, std::optional<std::uint64_t>(16));
  EXPECT_TRUE(std::all_of(k.args.bytes.begin() + 16, k.args.bytes.end(), [](std::uint8_t b) { return b == 0; }));
  ASSERT_EQ(k.args.pointers.size(), 1u);
  EXPECT_EQ(k.args.pointers[0].offset, 0u);
}

// The no-deadlock rule with two ranks that do different things: rank 0 replays its iterations
// (collectives between graphs, by the program), rank 1 refuses to replay (several streams turned
// off) and runs everything itself. The fake driver's collective waits, across processes, until
// every rank has issued as many; a collective left inside a graph would never arrive and its
// peer would give up (exit 3). Both ranks finish, each with all 8 collectives issued.
TEST(RunCommand, RanksThatReplayAndRanksThatDoNotIssueTheSameCollectives) {
  const std::string dir = temp_dir();
  const std::string probe = probe_path();
  // Exit status 0 only when both ranks end well.
  const std::string two_ranks = "RANK=0 WORLD_SIZE=2 '" + probe + "' loop-collective & r0=$!; RANK=1 WORLD_SIZE=2 "
                                "NIMBLE_RUN_MULTI_STREAM=0 '" + probe + "' loop-collective; r1=$?; wait $r0 && [ $r1 -eq 0 ]";
  std::vector<std::string> env = fake_driver_env(true);
  env.push_back("FAKE_NCCL_RENDEZVOUS=" + dir);
  const RunResult r = run_with_env(env, {NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi", "--iteration",
                                         "1", "-o", dir + "/t.json", "--", "/bin/sh", "-c", two_ranks});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("deadlock"), std::string::npos) << r.output;
  const nlohmann::json replaying = read_json(dir + "/t.rank0.run.json");
  const nlohmann::json refusing = read_json(dir + "/t.rank1.run.json");
  ASSERT_TRUE(replaying.is_object() && refusing.is_object()) << r.output;
  EXPECT_EQ(replaying.value("iterations_replayed", 0), 6) << replaying.dump(2);
  EXPECT_EQ(replaying.value("collectives_run_in_place", 0), 6) << replaying.dump(2);
  EXPECT_EQ(refusing.value("iterations_replayed", -1), 0) << refusing.dump(2);
  std::size_t ranks_done = 0;
  for (std::size_t at = r.output.find("collectives_run=8"); at != std::string::npos;
       at = r.output.find("collectives_run=8", at + 1)) {
    ++ranks_done;
  }
  EXPECT_EQ(ranks_done, 2u) << r.output;
}

// A program of two ranks (as torchrun starts them: RANK and WORLD_SIZE set, one process each)
// under one `nimble run -o`: each rank writes its own trace and summary, and nimble prints a line
// per rank. `nimble record` does the same with traces.
TEST(RunCommand, EachRankOfAProgramWritesItsOwnTraceAndSummary) {
  const std::string dir = temp_dir();
  const std::string probe = probe_path();
  const std::string two_ranks = "RANK=0 WORLD_SIZE=2 '" + probe + "' loop & RANK=1 WORLD_SIZE=2 '" + probe +
                                "' loop; wait";
  const RunResult r = run_with_env(fake_driver_env(true), {NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi",
                                                           "--iteration", "1", "-o", dir + "/trace.json", "--", "/bin/sh",
                                                           "-c", two_ranks});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/trace.json")) << r.output;
  for (const std::string rank : {"0", "1"}) {
    const nlohmann::json summary = read_json(dir + "/trace.rank" + rank + ".run.json");
    ASSERT_TRUE(summary.is_object()) << r.output;
    EXPECT_EQ(summary.value("iterations_replayed", 0), 6) << summary.dump(2);
    EXPECT_EQ(summary.value("trace", ""), dir + "/trace.rank" + rank + ".json");
    EXPECT_NE(r.output.find("nimble run (rank " + rank + "): 6 iteration(s) replayed"), std::string::npos) << r.output;
  }

  const RunResult rec = run_with_env({"NIMBLE_LIBCUDA=" + fake_driver_path(), "NIMBLE_CUPTI=0"},
                                     {NIMBLE_TEST_CLI, "record", "-o", dir + "/rec.json", "--", "/bin/sh", "-c",
                                      "RANK=0 WORLD_SIZE=2 '" + probe + "' record & RANK=1 WORLD_SIZE=2 '" + probe +
                                          "' record; wait"});
  ASSERT_EQ(rec.exit_code, 0) << rec.output;
  for (const std::string rank : {"0", "1"}) {
    const std::string trace = dir + "/rec.rank" + rank + ".json";
    EXPECT_TRUE(std::filesystem::exists(trace)) << rec.output;
    EXPECT_NE(rec.output.find("nimble record: " + trace + " (rank " + rank + ")"), std::string::npos) << rec.output;
  }

  // -o naming the rank itself; a second run finds the files it rewrote, not only new ones.
  for (int run = 0; run < 2; ++run) {
    const RunResult named = run_with_env({"NIMBLE_LIBCUDA=" + fake_driver_path(), "NIMBLE_CUPTI=0"},
                                         {NIMBLE_TEST_CLI, "record", "-o", dir + "/r%r.json", "--", "/bin/sh", "-c",
                                          "RANK=0 WORLD_SIZE=2 '" + probe + "' record & RANK=1 WORLD_SIZE=2 '" + probe +
                                              "' record; wait"});
    ASSERT_EQ(named.exit_code, 0) << named.output;
    EXPECT_NE(named.output.find("nimble record: " + dir + "/r0.json (rank 0)"), std::string::npos) << named.output;
    EXPECT_NE(named.output.find("nimble record: " + dir + "/r1.json (rank 1)"), std::string::npos) << named.output;
  }
}

// Two processes with no rank (as torch.multiprocessing.spawn starts workers) under one
// `nimble run -o`: the first to write claims trace.json, the other writes trace.pidP.json, and
// nimble prints a line for each; nothing is overwritten. Before, the last to exit won.
TEST(RunCommand, ProcessesWithoutARankEachWriteTheirOwnTraceAndSummary) {
  const std::string dir = temp_dir();
  const std::string probe = probe_path();
  const std::string two = "'" + probe + "' loop & '" + probe + "' loop; wait";
  const RunResult r = run_with_env(fake_driver_env(true), {NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi",
                                                           "--iteration", "1", "-o", dir + "/trace.json", "--", "/bin/sh",
                                                           "-c", two});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> traces;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name == "trace.json" || (name.rfind("trace.pid", 0) == 0 && name.find(".run.") == std::string::npos)) {
      traces.push_back(entry.path().string());
    }
  }
  ASSERT_EQ(traces.size(), 2u) << r.output;
  std::set<long> pids;
  for (const std::string& trace : traces) {
    const std::string summary_path = trace.substr(0, trace.size() - 5) + ".run.json";
    const nlohmann::json summary = read_json(summary_path);
    ASSERT_TRUE(summary.is_object()) << summary_path << "\n" << r.output;
    EXPECT_EQ(summary.value("iterations_replayed", 0), 6) << summary.dump(2);
    EXPECT_EQ(summary.value("trace", ""), trace);
    pids.insert(read_json(trace)["recorded_with"].value("pid", 0L));
    EXPECT_NE(r.output.find("6 iteration(s) replayed, 0 kind(s) of fall-back; trace " + trace), std::string::npos) << r.output;
  }
  EXPECT_EQ(pids.size(), 2u) << "both traces came from one process";
  EXPECT_NE(r.output.find("nimble run (process "), std::string::npos) << r.output;
  // The next run claims afresh: the processes that held the names are gone.
  const RunResult one = run_with_env(fake_driver_env(true), {NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi",
                                                             "--iteration", "1", "-o", dir + "/trace.json", "--", probe,
                                                             "loop"});
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("trace " + dir + "/trace.json,"), std::string::npos) << one.output;
}

TEST(RunCommand, CompareAlternatesReplayedAndPlainBlocksInOneProcess) {
  const std::string dir = temp_dir();
  const RunResult r = run_with_env(fake_driver_env(true), {NIMBLE_TEST_CLI, "run", "--compare", "10", "-o", dir + "/trace.json",
                                                      "--", probe_path(), "overhead"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/trace.run.json");
  ASSERT_TRUE(summary.contains("compare")) << summary.dump(2);
  const nlohmann::json& compare = summary["compare"];
  EXPECT_EQ(compare.value("block", 0), 10);
  // 2000 iterations: about half in replayed blocks, half in plain ones, 9 of every 10 timed.
  const int replayed = summary.value("iterations_replayed", 0);
  EXPECT_GT(replayed, 900) << summary.dump(2);
  EXPECT_LT(replayed, 1100) << summary.dump(2);
  EXPECT_GT(compare["plain"].value("iterations", 0), 800) << summary.dump(2);
  EXPECT_GT(compare["replayed"].value("iterations", 0), 800) << summary.dump(2);
  EXPECT_GT(compare["plain"].value("median_ms", 0.0), 0.0);
  EXPECT_TRUE(compare["speedup"].is_number());
  // Every iteration not replayed reached the driver whole (200 launches), and no replayed one did.
  const auto c = counts(r.output);
  ASSERT_FALSE(c.empty()) << r.output;
  EXPECT_EQ(c.at("kernels_run"), (2000 - replayed) * 200) << r.output;
  EXPECT_NE(r.output.find("nimble run: compare (this process, alternating blocks of 10 iterations): median iteration"),
            std::string::npos)
      << r.output;
}

// nimble run with the trace, plan and graphs made on nimble's thread (kBuildInBackground), no trial,
// iteration 1 of the probe in `mode` (with its arguments) recorded; `slow`: the fake driver's
// delay (FAKE_DRIVER_INSTANTIATE_MS=..., FAKE_DRIVER_CAPTURE_MS=...). The run must succeed.
RunResult background_run(const std::string& dir, const std::string& slow, const std::vector<std::string>& probe_args) {
  const std::vector<std::string> env = {"NIMBLE_LIBCUDA=" + fake_driver_path(), "NIMBLE_CUPTI=0", "NIMBLE_RUN_TRIAL=0", kNoGuard,
                                        kBuildInBackground, "FAKE_DRIVER_GRAPHS=1", slow};
  std::vector<std::string> argv = {NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi", "--iteration", "1",
                                   "-o", dir + "/t.json", "--", probe_path()};
  argv.insert(argv.end(), probe_args.begin(), probe_args.end());
  RunResult r = run_with_env(env, argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r;
}

// With NIMBLE_RUN_BACKGROUND=1 a recording's plan and graphs are made on nimble's thread while the
// program runs on (here a slow instantiation: 150 ms a graph): the program waits only for its trace, keeps running
// its iterations itself meanwhile, and replay begins once the graphs are ready. The results are a
// plain run's of as many iterations.
TEST(RunCommand, GraphsAreBuiltWhileTheProgramRunsOnAndReplayBeginsWhenTheyAreReady) {
  const std::string dir = temp_dir();
  const RunResult r = background_run(dir, "FAKE_DRIVER_INSTANTIATE_MS=150", {"loop-until-replayed"});
  const auto c = counts(r.output, "iterations=");
  ASSERT_TRUE(c.count("first_replayed")) << r.output;
  // Iteration 1 was recorded; the program went on by itself while the graphs were built.
  EXPECT_GT(c.at("first_replayed"), 10) << r.output;
  EXPECT_GT(c.at("graph_launches"), 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_GE(summary.value("iterations_replayed", 0), 3) << summary.dump(2);
  ASSERT_EQ(summary.value("recordings", nlohmann::json::array()).size(), 1u) << summary.dump(2);
  const nlohmann::json waited = summary["recordings"][0]["setup"]["program_waited_ms"];
  EXPECT_EQ(waited.value("plan_and_graphs_in_background", false), true) << waited.dump();
  EXPECT_EQ(waited.value("trace_built_in_background", false), true) << waited.dump();
  EXPECT_GT(waited.value("background_trace_build", 0.0), 0.0) << waited.dump();
  EXPECT_GE(waited.value("graphs", 0.0), 150.0) << waited.dump();
  EXPECT_LT(waited.value("total", 1e9), 150.0) << "the program did not wait for the graphs: " << waited.dump();
  EXPECT_GE(waited.value("ready_after", 0.0), 150.0) << waited.dump();
  EXPECT_NE(r.output.find(" ms) were made while it ran on, ready "), std::string::npos) << r.output;

  const RunResult plain = plain_run("loop-until-replayed " + std::to_string(c.at("iterations")));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output << plain.output;
}

// A background run of the probe's `mode` in which the program makes calls that the driver fails,
// or that fail the program's own capture, when they meet nimble's building threads (`failures`:
// the probe's count of them): none fails, replay begins, and the results are a plain run's of as
// many iterations.
void expect_the_program_unharmed_by_background_graphs(const std::string& slow, const std::string& mode,
                                                      const std::string& failures) {
  const RunResult r = background_run(temp_dir(), slow, {mode});
  const auto c = counts(r.output, "iterations=");
  ASSERT_TRUE(c.count(failures)) << r.output;
  EXPECT_EQ(c.at(failures), 0) << r.output;
  EXPECT_GT(c.at("first_replayed"), 0) << r.output;
  const RunResult plain = plain_run(mode + " " + std::to_string(c.at("iterations")));
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output << plain.output;
}

// The driver fails a context-wide synchronisation while any stream is being captured (and the
// capture with it). While nimble's thread captures the graphs (held open 20 ms each here), the
// program's cuCtxSynchronize after every iteration waits for the capture instead.
TEST(RunCommand, TheProgramsContextSyncsNeverMeetACaptureOfNimblesThread) {
  expect_the_program_unharmed_by_background_graphs("FAKE_DRIVER_CAPTURE_MS=20", "loop-until-replayed-context-sync",
                                                   "failed_context_syncs");
}

// A GLOBAL-mode capture of the program's own (torch.cuda.graph) is invalidated by an allocation
// any other thread makes meanwhile (the fake driver does as the real one). The program begins one
// right after the recorded iteration and holds it open 100 ms: nimble's thread waits for it to end
// before it builds its graphs, and the program's graph is captured.
TEST(RunCommand, AGraphCaptureOfTheProgramsOwnNeverMeetsNimblesGraphBuilding) {
  expect_the_program_unharmed_by_background_graphs("FAKE_DRIVER_INSTANTIATE_MS=0", "loop-until-replayed-own-capture",
                                                   "own_capture_failed");
}

// Stream work nimble does not look into (a value written to memory and waited for, a prefetch and a
// synchronous array copy, between two kernels, every fourth iteration) comes while nimble holds the iteration's first kernel: the held
// kernel goes to the GPU first, then the program's call runs. The results are a plain run's of as
// many iterations, the write included each time; the other iterations are replayed.
TEST(RunCommand, StreamWorkNimbleDoesNotReplayNeverOvertakesTheCallsItHolds) {
  const std::string dir = temp_dir();
  const RunResult r = background_run(dir, "FAKE_DRIVER_INSTANTIATE_MS=0", {"loop-until-replayed-stream-ops"});
  const auto c = counts(r.output, "iterations=");
  ASSERT_TRUE(c.count("first_replayed")) << r.output;
  EXPECT_GT(c.at("first_replayed"), 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_GE(summary.value("iterations_replayed", 0), 3) << summary.dump(2);
  EXPECT_FALSE(summary["fallbacks"].empty()) << "the stream work came in the middle of replayed iterations: " << summary.dump(2);
  const RunResult plain = plain_run("loop-until-replayed-stream-ops " + std::to_string(c.at("iterations")));
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output << plain.output;
  EXPECT_EQ(c.at("stream_writes"), counts(plain.output, "iterations=").at("stream_writes")) << r.output;
  EXPECT_EQ(c.at("stream_writes"), (c.at("iterations") + 3) / 4) << r.output;
  EXPECT_EQ(c.at("array_copies"), c.at("stream_writes")) << r.output;
}

// The same work in the recorded iteration itself: nimble cannot replay what it cannot see, so the
// recording is refused with the task that stopped it, and the program runs as it is.
TEST(RunCommand, AnIterationHoldingStreamWorkNimbleDoesNotLookIntoIsRefusedWithTheReason) {
  const std::string dir = temp_dir();
  const RunResult r = nimble_run(dir + "/t.json", "loop-until-replayed-stream-ops-always 12");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_EQ(summary.value("iterations_replayed", -1), 0) << summary.dump(2);
  const std::string why = summary.value("nothing_replayed_because", "");
  EXPECT_NE(why.find("(stream_op)"), std::string::npos) << why;
  EXPECT_NE(why.find("opaque to nimble"), std::string::npos) << why;
  const nlohmann::json trace = read_json(dir + "/t.json");
  int stream_ops = 0;
  for (const auto& task : trace["tasks"]) {
    if (task.value("kind", "") != "stream_op") continue;
    ++stream_ops;
    const std::string api = task.value("api", "");
    EXPECT_TRUE(api.starts_with("cuStream") || api.starts_with("cuMemPrefetchAsync") || api.starts_with("cuMemcpyHtoA"))
        << task.dump();
  }
  EXPECT_EQ(stream_ops, 4) << "the write, the wait, the prefetch and the array copy of the recorded iteration";
  const RunResult plain = plain_run("loop-until-replayed-stream-ops-always 12");
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output << plain.output;
}

// A program that ends before its recording's graphs are ready ran every iteration itself: its
// results are a plain run's, and the summary says why nothing was replayed.
TEST(RunCommand, AProgramThatEndsBeforeTheGraphsAreReadyIsToldWhyNothingWasReplayed) {
  const std::string dir = temp_dir();
  const RunResult r = background_run(dir, "FAKE_DRIVER_INSTANTIATE_MS=400", {"loop-until-replayed", "8"});
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_EQ(summary.value("iterations_replayed", -1), 0) << summary.dump(2);
  EXPECT_NE(summary.value("nothing_replayed_because", "").find("the program ended before its graphs were ready"),
            std::string::npos)
      << summary.dump(2);
  EXPECT_TRUE(std::filesystem::exists(dir + "/t.json")) << "the trace is written all the same";
  const RunResult plain = plain_run("loop-until-replayed 8");
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output << plain.output;
}

// nimble run on the probe (its iteration uses three streams) with several streams turned off:
// recorded and scheduled, then replay is refused with the reason, and the program runs to its
// end as it is.
TEST(RunCommand, AMultiStreamIterationIsRefusedWithTheReasonAndTheProgramRunsAsItIs) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/trace.json";
  std::vector<std::string> env = fake_driver_env(false);
  env.push_back("NIMBLE_RUN_MULTI_STREAM=0");
  const RunResult r = run_with_env(env, {NIMBLE_TEST_CLI, "run", "--capture-range", "cudaProfilerApi",
                                                       "--iteration", "1", "-o", out, "--", probe_path(), "record"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_NE(r.output.find("nimble run: not replaying " + out + ": the iteration used 3 streams"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nimble run: nothing was replayed: " + out + ": the iteration used 3 streams"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("The program runs as it is."), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was replayed"), std::string::npos) << r.output;
  // The summary says the same (written since nothing replayable also deserves one).
  const nlohmann::json summary = read_json(dir + "/trace.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_EQ(summary.value("iterations_replayed", -1), 0);
  EXPECT_NE(summary.value("nothing_replayed_because", "").find("the iteration used 3 streams"), std::string::npos)
      << summary.dump(2);
}

// A program nimble has never seen, run unchanged (the automatic range): its set-up repeats a
// short pattern of its own before the loop, and each epoch has training steps and eval steps that
// begin alike. The set-up pattern is recorded first; when the program moves on, nimble records
// the training step, then the eval step, and replays each when it comes back.
TEST(RunCommand, AProgramsSetUpTrainingAndEvalStepsAreEachRecordedAndReplayed) {
  const std::string dir = temp_dir();
  // (Side exits off: with them, the eval step's third exit from the training step is recorded as the
  // rest of that step instead: AnEvalStepLeavingTheTrainingStepBecomesItsSideExit.)
  const RunResult r = auto_run(dir + "/t.json", "program", {"NIMBLE_RUN_STALE=8", "NIMBLE_RUN_SIDE_EXITS=0"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"/t.json", "/t.2.json", "/t.3.json"}) EXPECT_TRUE(std::filesystem::exists(dir + name)) << name;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  // In the order they were recorded, with their calls per iteration (the steps' loss reads run
  // between iterations: recordings_by_calls).
  const nlohmann::json& recordings = summary["recordings"];
  ASSERT_EQ(recordings.size(), 3u) << summary.dump(2);
  EXPECT_EQ(recordings[0].value("calls", 0), 2) << summary.dump(2);
  const nlohmann::json& training = recordings[1];
  const nlohmann::json& eval = recordings[2];
  ASSERT_EQ(training.value("calls", 0), 4) << summary.dump(2);
  ASSERT_EQ(eval.value("calls", 0), 2) << summary.dump(2);
  // Epoch 2: 30 training and 20 eval steps, all replayed: a switch between the two (they begin
  // with the same input copy) costs no iteration.
  EXPECT_GE(training.value("iterations_replayed", 0), 30) << summary.dump(2);
  EXPECT_GE(eval.value("iterations_replayed", 0), 20) << summary.dump(2);
  EXPECT_EQ(training.value("state", ""), "replaying");
  EXPECT_EQ(eval.value("state", ""), "replaying");
  // Every kernel ran with the arguments a plain run gives it, in the same order.
  EXPECT_EQ(work_of(r.output), work_of(plain_run("program").output));
  EXPECT_LT(counts(r.output).at("kernels_run"), 100) << r.output;  // of 260 in a plain run
  // The program can ask how many iterations were replayed (the corpus counts its steps so); at its
  // end that is the summary's count. Preloaded without nimble run, it answers 0.
  EXPECT_EQ(counts(r.output).at("replayed_seen"), summary.value("iterations_replayed", -2)) << r.output;
  EXPECT_EQ(counts(plain_run("program").output).at("replayed_seen"), 0);
  // And how many segments of recorded work reached the GPU: every recording's, as the summary says.
  EXPECT_EQ(counts(r.output).at("segments_seen"), summary.value("segments_launched", -2)) << r.output;
  EXPECT_GE(counts(r.output).at("segments_seen"), counts(r.output).at("replayed_seen")) << r.output;
  EXPECT_EQ(counts(plain_run("program").output).at("segments_seen"), 0);
}

// The fake inference service (`mode`: "buckets" or "buckets-second") under nimble run: three
// recordings, one per length, all replaying; at least 200 of its 300 steps replayed, every kernel
// run as in a plain run. Returns the first recording's summary.
nlohmann::json expect_each_length_replayed(const std::string& mode) {
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/t.json", mode + " 300");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  const nlohmann::json recordings = summary.is_object() ? summary.value("recordings", nlohmann::json::array()) : nlohmann::json();
  EXPECT_EQ(recordings.size(), 3u) << r.output;
  for (const nlohmann::json& recording : recordings) {
    EXPECT_EQ(recording.value("state", ""), "replaying") << recording.dump(2);
    EXPECT_GE(recording.value("iterations_replayed", 0), 40) << recording.dump(2);
  }
  // The first recording met the other lengths before they were recorded: those mismatches are
  // reported, and were not counted against it.
  EXPECT_NE(r.output.find("were the program running an iteration no recording holds: no failures"), std::string::npos)
      << r.output;
  EXPECT_GE(counts(r.output).at("replayed_seen"), 200) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run(mode + " 300").output));
  return recordings.empty() ? nlohmann::json::object() : recordings[0];
}

// An inference service's batches, padded to one of three lengths drawn at random, begin alike and
// part at their third call. Each length gets its recording; none is dropped for the steps of the
// lengths not recorded yet, which it met twice as often as its own (before: all three dropped after
// 16 such mismatches, 41 of 300 steps replayed; bucketed_inference.py on the H200, 1 of 200).
TEST(RunCommand, BatchesOfThreeLengthsDrawnAtRandomAreEachRecordedAndReplayed) {
  const nlohmann::json first = expect_each_length_replayed("buckets");
  EXPECT_GT(first.value("switches_to_unrecorded_iterations", 0), 0) << first.dump(2);
  EXPECT_GT(first["fallbacks"].size(), 0u) << first.dump(2);  // (more than the first call matched)
}

// The same when the lengths part at the second call (a false start each time, as the H200's
// inference service's did: "task 1 (distribution_element): a different kernel"): before, each
// recording was dropped after 16 of them although it had replayed (6, 16 and 19 iterations).
TEST(RunCommand, LengthsThatPartAtTheSecondCallAreEachRecordedAndReplayed) {
  const nlohmann::json first = expect_each_length_replayed("buckets-second");
  EXPECT_GT(first.value("switches_to_unrecorded_iterations", 0), 0) << first.dump(2);
  EXPECT_GT(first.value("false_starts", 0), 0) << first.dump(2);
}

// The inference service as bucketed_inference.py issues it (a fill kernel begins each step and
// comes back 14 times inside it; the labels are read at the end), its trials on: each recording
// begins only right after the program's host sync, so the fill kernels inside a step are no false
// starts (before: 1965 false starts in 400 steps, 153 steps replayed; after: 87, 170; the H200's
// service lost 0.5-1 ms in each step no recording replayed). The results are the plain run's.
TEST(RunCommand, AServiceWhoseFirstKernelRecursInsideItsStepsHasNoFalseStartsThere) {
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/t.json", "service 400", {"NIMBLE_RUN_MIN_SPEEDUP=0.01"}, /*trial=*/true);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_LE(summary.value("false_starts", 100000), 400) << r.output;  // at most one a step
  EXPECT_GE(summary.value("iterations_replayed", 0), 100) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("service 400").output));
}

// A program whose steps are 6 calls (an input copy, three kernels, a copy out and its sync) and eval
// steps 4: nimble run records none of them, the program runs as it would plain, and the exit line
// says why.
TEST(RunCommand, ALoopShorterThanTheMinimumIsLeftToTheProgramAndTheSummarySaysSo) {
  const std::string dir = temp_dir();
  std::vector<std::string> env = with_default_minimum(fake_driver_env(true, /*trial=*/true));
  const RunResult r = run_with_env(env, with_probe({NIMBLE_TEST_CLI, "run", "-o", dir + "/t.json", "--"}, "program"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/t.json")) << r.output;
  EXPECT_NE(r.output.find("nothing was recorded: no repeating period of at least 8 calls was found in "),
            std::string::npos)
      << r.output;
  // (Whichever loop was looked at last: the steps' or the eval steps'.)
  std::smatch loop;
  ASSERT_TRUE(std::regex_search(r.output, loop,
                                std::regex(R"(\(a loop of ([46]) calls repeated: nimble run leaves loops shorter than )"
                                           R"(NIMBLE_RUN_ITERATION_SHORTEST to the program)")))
      << r.output;
  // More iterations would not help.
  EXPECT_EQ(r.output.find("Run more iterations"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("mark many iterations"), std::string::npos) << r.output;
  EXPECT_EQ(counts(r.output).at("graph_launches"), 0) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("program").output));
  // With a lower minimum the same steps are recorded and replayed.
  const RunResult lower = auto_run(dir + "/l.json", "program", {"NIMBLE_RUN_STALE=8"});
  ASSERT_EQ(lower.exit_code, 0) << lower.output;
  EXPECT_GT(counts(lower.output).at("replayed_seen"), 0) << lower.output;
}

// A program that stays in a loop below the minimum (6 calls, 3000 times): looking on would cost
// about 900 instructions a call (scripts/host_cost.sh); after 4096 tasks in it nimble run rests.
TEST(RunCommand, AProgramThatStaysInAShortLoopIsLeftAloneAfterAWhile) {
  const std::string dir = temp_dir();
  std::vector<std::string> env = with_default_minimum(fake_driver_env(true, /*trial=*/true));
  const RunResult r = run_with_env(env, with_probe({NIMBLE_TEST_CLI, "run", "-o", dir + "/t.json", "--"}, "overhead-short 3000"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_EQ(summary.value("look_rests", 0), 1) << summary.dump(2);
  const std::string why = summary.value("nothing_replayed_because", std::string());
  EXPECT_NE(why.find("(a loop of 6 calls repeated"), std::string::npos) << why;
  EXPECT_NE(why.find("rested in between, as only that loop repeated: NIMBLE_RUN_LOOK"), std::string::npos) << why;
  EXPECT_EQ(counts(r.output).at("graph_launches"), 0) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("overhead-short 3000").output));
  // NIMBLE_RUN_LOOK=0: looking never rests, the same program is looked at to its end.
  env.push_back("NIMBLE_RUN_LOOK=0");
  const RunResult looking =
      run_with_env(env, with_probe({NIMBLE_TEST_CLI, "run", "-o", dir + "/l.json", "--"}, "overhead-short 3000"));
  ASSERT_EQ(looking.exit_code, 0) << looking.output;
  EXPECT_EQ(read_json(dir + "/l.run.json").value("look_rests", -1), 0) << looking.output;
}

// An eval pass of four batches after each epoch's training steps, far shorter than the calls that
// make nimble look again (as in a real script: four ResNet-18 eval batches are about 280 calls,
// NIMBLE_RUN_STALE is 1024; here 52 and 64). Its first batch begins with the same input copy as a
// training step: the training recording false-starts there, no other takes over, and that side
// exit makes nimble look at once, starting with the two calls that left the loop; the fourth
// batch is recorded and later passes are replayed. Every kernel runs as in a plain run.
TEST(RunCommand, AShortEvalPassIsFoundWhenTheProgramLeavesTheTrainingStepAndIsReplayed) {
  const std::string dir = temp_dir();
  auto run_epochs = [&](const std::string& side_exit_looks) {
    const RunResult r = auto_run(dir + "/e" + side_exit_looks + ".json", "epochs",
                                 {"NIMBLE_RUN_STALE=64", "NIMBLE_RUN_SIDE_EXIT_LOOKS=" + side_exit_looks});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(work_of(r.output), work_of(plain_run("epochs").output));
    const nlohmann::json summary = read_json(dir + "/e" + side_exit_looks + ".run.json");
    EXPECT_TRUE(summary.is_object()) << r.output;
    return recordings_by_calls(summary);
  };
  std::map<int, nlohmann::json> by_calls = run_epochs("3");
  ASSERT_TRUE(by_calls.count(4) && by_calls.count(11)) << r_dump(by_calls);
  // The set-up pattern, the training step and the eval step, nothing else: the first pass, whose
  // first batch nimble saw only in part, was found at its fourth batch, and the window that then
  // opened on the training step (which begins with the same copy) was let go, not recorded.
  EXPECT_EQ(by_calls.size(), 3u) << r_dump(by_calls);
  EXPECT_EQ(by_calls[11].value("state", ""), "replaying");
  // Recorded in the second epoch's pass: the six passes after it, four batches each.
  EXPECT_GE(by_calls[11].value("iterations_replayed", 0), 24) << r_dump(by_calls);
  EXPECT_GE(by_calls[4].value("iterations_replayed", 0), 60) << r_dump(by_calls);
  // Without the side-exit look the pass is never recorded: it never makes the program stale.
  EXPECT_EQ(run_epochs("0").count(11), 0u);
}

// The same epochs, each eval pass's first batch launching one more kernel: three identical batches
// end with the pass, so the first look records... the next training step, and lets it go. The
// period is remembered: in the next pass its second batch is enough, and the third is recorded.
TEST(RunCommand, AnEvalPassWhoseFirstBatchDiffersIsRecordedInALaterPass) {
  const std::string dir = temp_dir();
  const nlohmann::json summary = auto_run_summary(dir, "f", "epochs-first-eval-differs", {"NIMBLE_RUN_STALE=64"});
  ASSERT_TRUE(summary.is_object());
  std::map<int, nlohmann::json> by_calls = recordings_by_calls(summary);
  ASSERT_TRUE(by_calls.count(4) && by_calls.count(11)) << r_dump(by_calls);
  EXPECT_EQ(by_calls[11].value("state", ""), "replaying") << r_dump(by_calls);
  // Recorded at the latest in the third pass: its fourth batch, then batches 2-4 of five more.
  EXPECT_GE(by_calls[11].value("iterations_replayed", 0), 15) << r_dump(by_calls);
  EXPECT_FALSE(by_calls.count(12)) << r_dump(by_calls);  // the first batch is never taken for the pass
}

// A step that logs every tenth step launches one kernel more in its middle: the training recording
// is left there each time, with the same three calls before the next step. The third such exit is
// recorded as a side exit, entered from there on: every later logging step is replayed too, and the
// work is a plain run's.
TEST(RunCommand, AStepThatLogsEveryTenthStepIsRecordedAsASideExitAndReplayed) {
  const std::string dir = temp_dir();
  // (The fake steps are short: NIMBLE_RUN_SIDE_EXIT_SHORTEST would leave their stretches to the program.)
  const nlohmann::json summary =
      auto_run_summary(dir, "l", "logging-step", {"NIMBLE_RUN_STALE=64", "NIMBLE_RUN_SIDE_EXIT_SHORTEST=1"});
  ASSERT_TRUE(summary.is_object());
  std::map<int, nlohmann::json> by_calls = recordings_by_calls(summary);
  std::map<int, nlohmann::json> sides = side_exits_by_calls(summary);
  ASSERT_TRUE(by_calls.count(4) && sides.count(3)) << summary.dump(2);
  const nlohmann::json& side = sides[3];
  EXPECT_EQ(side.value("state", ""), "replaying") << r_dump(by_calls);
  ASSERT_TRUE(side.contains("side_exit_of")) << r_dump(by_calls);
  EXPECT_EQ(side["side_exit_of"].value("after_calls", 0), 3) << r_dump(by_calls);
  EXPECT_EQ(side["side_exit_of"].value("trace", ""), by_calls[4].value("trace", "")) << r_dump(by_calls);
  // 30 logging steps: all but those before the training step was recorded and the three exits
  // that make the side exit's recording.
  EXPECT_GE(side.value("iterations_replayed", 0), 20) << r_dump(by_calls);
  // The training recording's fall-backs there went on in the side exit's recording, but for those three.
  int fallbacks = 0;
  for (const auto& f : by_calls[4]["fallbacks"]) fallbacks += f.value("count", 0);
  EXPECT_EQ(fallbacks - by_calls[4].value("fallbacks_taken_by_side_exits", 0), 3) << r_dump(by_calls);
  EXPECT_EQ(by_calls[4].value("fallbacks_taken_by_side_exits", 0), side.value("iterations_replayed", -1) + 0)
      << r_dump(by_calls);
  // Its trace says what it is.
  const nlohmann::json trace = read_json(side.value("trace", ""));
  ASSERT_TRUE(trace.is_object());
  EXPECT_EQ(trace["capture"]["side_exit"].value("calls", 0), 3) << trace["capture"].dump();
  EXPECT_EQ(trace["capture"]["side_exit"].value("after_calls", 0), 3) << trace["capture"].dump();
  // With side exits off, the logging steps are never replayed.
  const RunResult off = auto_run(dir + "/o.json", "logging-step", {"NIMBLE_RUN_STALE=64", "NIMBLE_RUN_SIDE_EXITS=0"});
  ASSERT_EQ(off.exit_code, 0) << off.output;
  const nlohmann::json off_summary = read_json(dir + "/o.run.json");
  EXPECT_TRUE(side_exits_by_calls(off_summary).empty()) << off.output;
}

// After each step's loss read, 0, 1 or 2 more reads of a metric, as a progress bar that refreshes
// by its clock makes them (PyTorch Lightning's: a 719-call recording fell back 16 times at its
// fifth call and was dropped, H200). The reads at the recorded window's ends run between two
// replayed iterations, however many there are: one recording of the step, replayed from the
// steps after it was found to the last, no fall-back, and the work is a plain run's. (With the
// reads inside the recordings: four recordings of 5 to 7 calls, 78 fall-backs, 216 steps replayed.)
TEST(RunCommand, HostReadsBetweenStepsThatVaryInNumberRunBetweenReplayedIterations) {
  const std::string dir = temp_dir();
  const nlohmann::json summary = auto_run_summary(dir, "p", "progress-reads", {"NIMBLE_RUN_STALE=64"});
  ASSERT_TRUE(summary.is_object());
  const nlohmann::json& recordings = summary["recordings"];
  ASSERT_EQ(recordings.size(), 2u) << summary.dump(2);  // the set-up pattern, then the step
  const nlohmann::json& step = recordings[1];
  EXPECT_EQ(step.value("calls", 0), 4) << summary.dump(2);  // upload, three kernels
  EXPECT_GE(step["setup"].value("end_reads_run_by_program", 0), 1) << summary.dump(2);
  EXPECT_GE(step.value("iterations_replayed", 0), 250) << summary.dump(2);
  EXPECT_TRUE(step["fallbacks"].empty()) << summary.dump(2);
  EXPECT_EQ(step.value("false_starts", -1), 0) << summary.dump(2);
  EXPECT_TRUE(side_exits_by_calls(summary).empty()) << summary.dump(2);
}

// The eval step begins with the training step's input copy: the training recording takes it first
// and is left after that call, each time alike. The third time, the rest of the eval step is
// recorded as a side exit (instead of a look finding the eval step on its own): every step of the
// second epoch is replayed, and the work is a plain run's.
TEST(RunCommand, AnEvalStepLeavingTheTrainingStepBecomesItsSideExit) {
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/t.json", "program", {"NIMBLE_RUN_STALE=8", "NIMBLE_RUN_SIDE_EXIT_SHORTEST=1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("program").output));
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  std::map<int, nlohmann::json> by_calls = recordings_by_calls(summary);
  std::map<int, nlohmann::json> sides = side_exits_by_calls(summary);
  ASSERT_TRUE(by_calls.count(4) && sides.count(2)) << summary.dump(2);
  // The eval step's calls after its first (an input copy like the training step's).
  EXPECT_EQ(sides[2]["side_exit_of"].value("after_calls", 0), 1);
  EXPECT_EQ(sides[2]["side_exit_of"].value("trace", ""), by_calls[4].value("trace", ""));
  EXPECT_GE(sides[2].value("iterations_replayed", 0), 20) << r_dump(sides);
  EXPECT_GE(by_calls[4].value("iterations_replayed", 0), 30) << r_dump(by_calls);
  EXPECT_EQ(counts(r.output).at("replayed_seen"), summary.value("iterations_replayed", -2)) << r.output;
}

// Epochs with six cuDNN calls in each training step, which nimble run skips once their inputs are
// known, and an eval pass of two batches: too short to be a period, so the look the pass asks for
// (a side exit) is still under way when the training steps are replayed again. A skipped call
// launches nothing: while looks ran with calls skipped they found "periods" in the thinned steps
// and recorded that many calls of the real one, prefixes of the step (6 and 9 of its 11 calls
// here; on the GPU 284 and 375 of a ResNet-18 step's 474 tasks). Only the set-up pattern and the
// training step are recorded, library calls are still skipped, and the work is a plain run's.
TEST(RunCommand, LooksForANewIterationSeeEveryLibraryCallsWork) {
  const std::string dir = temp_dir();
  // (Side exits off: with them the eval pass, left from the training step's first call, is recorded too.)
  const nlohmann::json summary =
      auto_run_summary(dir, "e", "epochs-library", {"NIMBLE_RUN_STALE=64", "NIMBLE_RUN_SIDE_EXITS=0"});
  std::map<int, nlohmann::json> by_calls = recordings_by_calls(summary);
  ASSERT_TRUE(by_calls.count(10)) << r_dump(by_calls);
  // The set-up pattern and the step: no prefix of it, and no other stretch of the step's length.
  EXPECT_EQ(summary["recordings"].size(), 2u) << r_dump(by_calls);
  EXPECT_GE(by_calls[10].value("iterations_replayed", 0), 60) << r_dump(by_calls);
  EXPECT_GT(by_calls[10]["library"]["calls"]["cudnnBackendExecute"].value("skipped", 0), 300) << r_dump(by_calls);
}

// The process guard times the program with nimble run paused and running. Where replay costs the
// program more than it saves (each graph launch takes 2 ms of host time here), nimble run steps
// aside for good after the spans: the rest of the 2000 iterations run as the program issues them,
// and the work is a plain run's.
TEST(RunCommand, TheProcessGuardStepsAsideWhereReplaySlowsTheProgram) {
  const ProbeRun run = run_overhead_probe(temp_dir(), {"NIMBLE_RUN_TRIAL=0", "NIMBLE_RUN_GUARD=3", "FAKE_DRIVER_GRAPH_LAUNCH_US=2000"});
  if (::testing::Test::HasFailure()) return;
  const nlohmann::json& guard = run.summary["guard"];
  EXPECT_EQ(guard.value("state", ""), "stepped aside") << guard.dump(2);
  EXPECT_EQ(guard["paused_ns_per_call"].size(), 3u) << guard.dump(2);
  EXPECT_LT(guard.value("paused_over_running", 9.0), 1.0) << guard.dump(2);
  EXPECT_GE(run.summary.value("iterations_replayed", 0), 4) << run.summary.dump(2);
  EXPECT_LT(run.summary.value("iterations_replayed", 9999), 100) << run.summary.dump(2);
  EXPECT_NE(run.result.output.find("nimble run: stepped aside for good: the program ran "), std::string::npos) << run.result.output;
  EXPECT_EQ(work_of(run.result.output), work_of(plain_run("overhead").output));
}

// Where replay saves the program time (each eager launch takes 50 us of host time: more than nimble's
// own checks of a replayed call cost under ASan, about 15 us), the guard keeps nimble run after two
// clear spans of each kind (three when one was disturbed), and nearly every iteration is replayed.
TEST(RunCommand, TheProcessGuardKeepsReplayThatPays) {
  const ProbeRun run = run_overhead_probe(temp_dir(), {"NIMBLE_RUN_TRIAL=0", "NIMBLE_RUN_GUARD=3", "FAKE_DRIVER_LAUNCH_US=50"});
  if (::testing::Test::HasFailure()) return;
  const nlohmann::json& guard = run.summary["guard"];
  EXPECT_EQ(guard.value("state", ""), "kept") << guard.dump(2);
  // Two spans of each when every one is clear; all three when a busy machine disturbed one.
  EXPECT_GE(guard["paused_ns_per_call"].size(), 2u) << guard.dump(2);
  EXPECT_LE(guard["paused_ns_per_call"].size(), 3u) << guard.dump(2);
  EXPECT_GT(guard.value("paused_over_running", 0.0), 1.08) << guard.dump(2);
  EXPECT_NE(run.result.output.find("nimble run: the process guard kept nimble run: the program ran "), std::string::npos)
      << run.result.output;
  // A paused nimble run resumes at a host sync, where the next iteration begins: no fall-back.
  EXPECT_TRUE(run.summary["fallbacks"].empty()) << run.summary["fallbacks"].dump(2);
  // Of 2000 iterations: the recorded one, and the paused spans' few (judged again after 256Ki calls).
  EXPECT_GE(run.summary.value("iterations_replayed", 0), 1950) << run.summary.dump(2);
  EXPECT_EQ(work_of(run.result.output), work_of(plain_run("overhead").output));
}

// A loop whose result is read every 128 iterations after a kernel of a drawn launch shape, after a
// set-up that synchronised: no period ends at a read, and the stretch between two (2,050 calls) is
// never quiet by the usual measure. Found halfway through a stretch, the iteration begins at its
// input copy, as after a read: every iteration but the first few is replayed, none falls back, the
// look ends once it has found it, and the guard judges the program between its reads. (Before
// 2026-12-01 nothing was found; without the set-up's sync, the iteration was cut after its copy and
// fell back at every read, and the guard never began.)
TEST(RunCommand, ALoopReadEveryFewThousandCallsAfterWorkThatNeverRepeatsIsFoundAndJudged) {
  const std::string dir = temp_dir();
  const nlohmann::json summary = auto_run_summary(dir, "r", "rare-reads", {"NIMBLE_RUN_GUARD=3", "FAKE_DRIVER_LAUNCH_US=20"});
  std::map<int, nlohmann::json> by_calls = recordings_by_calls(summary);
  ASSERT_TRUE(by_calls.count(16)) << r_dump(by_calls);
  EXPECT_GE(by_calls[16].value("iterations_replayed", 0), 5000) << r_dump(by_calls);
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary["fallbacks"].dump(2);
  EXPECT_LT(summary["looking"].value("calls_looked_at", 1u << 30), 8000) << summary["looking"].dump();
  // (Replayed, each 20-us launch is saved: the guard keeps nimble run. Before 2026-12-01 every paused
  // span was cut untimed after 1,024 calls without a sync, and the guard went on undecided.)
  const nlohmann::json& guard = summary["guard"];
  EXPECT_EQ(guard.value("state", ""), "kept") << guard.dump(2);
  EXPECT_GE(guard.value("judgements", 0), 1) << guard.dump(2);
  EXPECT_GE(guard["paused_ns_per_call"].size(), 2u) << guard.dump(2);
  EXPECT_LE(guard.value("spoiled_spans", 99), 1) << guard.dump(2);
  EXPECT_EQ(guard.value("longest_sync_gap_calls", 0), 2050) << guard.dump(2);
}

// The guard counts the program's calls: a library call once, skipped or not, never the launches it
// makes (else a replayed iteration, its cuDNN calls skipped, would count fewer calls than a paused
// one and read slower per call: GPT-2 and BERT read 0.88 and 0.92 so on the H200 and lost their replay).
TEST(RunCommand, TheProcessGuardCountsALibraryCallOnceWhetherItIsSkippedOrNot) {
  const std::string dir = temp_dir();
  const RunResult skipping = nimble_run(dir + "/skip.json", "library-long", true, {"NIMBLE_RUN_GUARD=6"});
  const RunResult calling =
      nimble_run(dir + "/call.json", "library-long", true, {"NIMBLE_RUN_GUARD=6", "NIMBLE_RUN_SKIP_LIBRARY=0"});
  ASSERT_EQ(skipping.exit_code, 0) << skipping.output;
  ASSERT_EQ(calling.exit_code, 0) << calling.output;
  const nlohmann::json skipped = read_json(dir + "/skip.run.json"), called = read_json(dir + "/call.run.json");
  EXPECT_GE(skipped["library"]["calls"]["cudnnBackendExecute"].value("skipped", 0), 10) << skipped.dump(2);
  EXPECT_GT(skipped["guard"].value("program_calls", 0), 40) << skipped["guard"].dump(2);
  EXPECT_EQ(skipped["guard"].value("program_calls", 0), called["guard"].value("program_calls", 1))
      << skipped["guard"].dump(2) << called["guard"].dump(2);
  EXPECT_EQ(work_of(skipping.output), work_of(calling.output));
}

// A program that ends while its recording is still on trial (blocks longer than the program) is
// told so, in the summary file and on stderr, rather than left with a bare "trial". (Blocks of
// 1000: the 2000 iterations end inside the first plain block.)
TEST(RunCommand, ATrialTheProgramEndsBeforeIsExplainedInTheSummary) {
  const ProbeRun run = run_overhead_probe(temp_dir(), {"NIMBLE_RUN_TRIAL=1000"});
  if (::testing::Test::HasFailure()) return;
  const RunResult& r = run.result;
  const nlohmann::json& rec = run.summary["recordings"][0];
  EXPECT_EQ(rec.value("state", ""), "trial") << rec.dump(2);
  // 1000 warm-up iterations replayed, then the first plain block, which the program ends inside.
  EXPECT_NE(rec.value("undecided_because", "").find("its trial had not decided when the program ended"), std::string::npos)
      << rec.dump(2);
  EXPECT_NE(rec.value("undecided_because", "").find("timed, of at least 999 each"), std::string::npos) << rec.dump(2);
  EXPECT_NE(r.output.find(": trial: its trial had not decided"), std::string::npos) << r.output;
}

// What a recording costs the program once (a short run cannot win it back) is measured and told:
// the wait for its trace and for its plan and graphs, on stderr and in the summary's setup. The
// trace file is written on nimble's own thread, and complete when the program has exited.
TEST(RunCommand, TheProgramsWaitForEachRecordingIsReported) {
  const std::string dir = temp_dir();
  const ProbeRun run = run_overhead_probe(dir, {});
  if (::testing::Test::HasFailure()) return;
  const RunResult& r = run.result;
  const nlohmann::json waited =
      run.summary["recordings"][0].value("setup", nlohmann::json::object()).value("program_waited_ms", nlohmann::json());
  ASSERT_TRUE(waited.is_object()) << run.summary.dump(2);
  // 200 launches written as JSON and built into graphs: it takes some time, and not seconds.
  double total = 0;
  for (const char* part : {"cupti_stop", "trace_build", "trace_write", "plan", "graphs"}) {
    EXPECT_TRUE(waited[part].is_number()) << part << ": " << waited.dump();
    total += waited.value(part, 1e9);
  }
  // Written while the program goes on: it waits only for an earlier file, of which there is none.
  EXPECT_GE(waited.value("trace_write", -1.0), 0.0) << waited.dump();
  EXPECT_LT(waited.value("trace_write", 1e9), 5.0) << waited.dump();
  EXPECT_EQ(waited.value("trace_written_in_background", false), true) << waited.dump();
  EXPECT_GT(waited.value("trace_build", -1.0), 0.0) << waited.dump();
  EXPECT_GT(waited.value("plan", -1.0), 0.0) << waited.dump();
  EXPECT_GT(waited.value("graphs", -1.0), 0.0) << waited.dump();
  // The program waited for the plan and graphs too (kWaitForGraphs): the total is every part.
  EXPECT_EQ(waited.value("plan_and_graphs_in_background", true), false) << waited.dump();
  EXPECT_NEAR(waited.value("total", -1.0), total, 1e-6) << waited.dump();
  EXPECT_GE(waited.value("ready_after", -1.0), waited.value("total", 1e9)) << waited.dump();
  EXPECT_LT(total, 5000.0) << waited.dump();
  EXPECT_NE(r.output.find("; the program waited "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("; the trace file is written meanwhile)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nimble: wrote "), std::string::npos) << "the writer says when the file is there: " << r.output;
  const trace::LoadResult written = trace::load_trace(dir + "/t.json");
  ASSERT_TRUE(written.trace) << dir << "/t.json";
  EXPECT_GE(written.trace->tasks.size(), 200u) << "the iteration's 200 launches";
  // What the recorded iteration itself took, in the trace and the summary alike.
  const double window_ms = written.trace->extra["capture"].value("window_ms", -1.0);
  EXPECT_GT(window_ms, 0.0) << written.trace->extra["capture"].dump();
  EXPECT_LT(window_ms, 5000.0);
  EXPECT_DOUBLE_EQ(run.summary["recordings"][0]["setup"].value("recorded_window_ms", -1.0), window_ms);
  EXPECT_FALSE(written.trace->schedule.has_value()) << "the recording, not the schedule nimble run replayed it with";
}

// Never slower: a recording is tried against the program's own iterations in this process first,
// and one whose replay did not pay (here: a minimum speedup no replay can reach) is dropped; the
// program then runs as it is, with the same results.
TEST(RunCommand, ARecordingWhoseThreeTrialsShowNoGainIsDroppedAndTheProgramRunsAsItIs) {
  const std::string dir = temp_dir();
  const std::vector<std::string> settings = {"NIMBLE_RUN_TRIAL=3", "NIMBLE_RUN_MIN_SPEEDUP=100"};
  const ProbeRun run = run_overhead_probe(dir, settings);
  if (::testing::Test::HasFailure()) return;
  const RunResult& r = run.result;
  const nlohmann::json& summary = run.summary;
  const nlohmann::json& rec = summary["recordings"][0];
  EXPECT_EQ(rec.value("state", ""), "dropped");
  EXPECT_NE(rec.value("dropped_because", "").find("replay did not pay in its trial"), std::string::npos) << rec.dump(2);
  EXPECT_TRUE(rec["trial_speedup"].is_number());
  // Three trials (NIMBLE_RUN_TRIALS), resting 16 and then 128 iterations between them: the last
  // drops it. Each replays a warm-up block and one timed block of 3, or a second timed one when the
  // first round's iterations were uneven (timings on a busy machine); every other iteration is
  // the program's own.
  EXPECT_EQ(rec["earlier_trial_speedups"].size(), 2u) << rec.dump(2);
  // Each earlier trial's timings are kept, every timed iteration of each phase in order.
  ASSERT_EQ(rec["earlier_trial_timings"].size(), 2u) << rec.dump(2);
  for (const auto& t : rec["earlier_trial_timings"]) {
    EXPECT_EQ(t["replayed"]["each_ms"].size(), t["replayed"].value("iterations", 0)) << t.dump();
    EXPECT_EQ(t["plain"]["each_ms"].size(), t["plain"].value("iterations", 0)) << t.dump();
    EXPECT_GE(t["plain"]["each_ms"].size(), 2u) << t.dump();  // (the first of a block is never timed)
  }
  EXPECT_EQ(rec["timings"]["replayed"]["each_ms"].size(), rec["timings"]["replayed"].value("iterations", 0));
  EXPECT_LE(summary.value("iterations_replayed", 99), 27) << summary.dump(2);
  // With the range given and its recording dropped, nothing is left to replay or find: the
  // wrappers take the idle path and nimble run sees no more calls (the probe makes 2000 x 202).
  EXPECT_LT(summary.value("calls_seen", 1u << 30), 100000u) << summary.dump(2);
  const auto c = counts(r.output);
  EXPECT_GE(c.at("kernels_run"), (2000 - 27) * 200) << r.output;
  EXPECT_NE(r.output.find(": replay did not pay in its trial"), std::string::npos) << r.output;
  // Its graph execs were destroyed when it was dropped, before the program ended, every one.
  EXPECT_EQ(rec["graphs"].value("released", false), true) << rec["graphs"].dump();
  EXPECT_GE(rec["graphs"].value("execs", 0), 1);
  EXPECT_EQ(c.at("execs_destroyed"), rec["graphs"].value("execs", -1)) << r.output;

  // Unmarked (the automatic range): once dropped, the same iteration is found again and passed
  // over; after a few such finds nimble stops looking, and with nothing live the rest runs at the
  // idle cost (nimble run sees no more calls).
  std::vector<std::string> env = {"NIMBLE_LIBCUDA=" + fake_driver_path(), "NIMBLE_CUPTI=0", "FAKE_DRIVER_GRAPHS=1",
                                  "NIMBLE_DEBUG=1", kWaitForGraphs, kNoGuard};
  env.insert(env.end(), settings.begin(), settings.end());
  const RunResult a = run_with_env(env, {NIMBLE_TEST_CLI, "run", "-o", dir + "/a.json", "--", probe_path(), "overhead"});
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const nlohmann::json auto_summary = read_json(dir + "/a.run.json");
  EXPECT_EQ(auto_summary["recordings"].size(), 1u) << auto_summary.dump(2);
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.2.json"));
  EXPECT_NE(a.output.find("only known iterations found and none is live; stopped for good"), std::string::npos) << a.output;
  EXPECT_LT(auto_summary.value("calls_seen", 1u << 30), 100000u) << auto_summary.dump(2);
}

// No period in the whole run. After 20 iterations (a sync each), running more may find one; after
// 2000, the iterations differ (their launch shapes change every time, as with dynamic padding) and
// the summary says so instead of asking for more.
TEST(RunCommand, WhenNothingRepeatsTheSummarySaysWhetherMoreIterationsCouldHelp) {
  const std::string dir = temp_dir();
  const std::vector<std::string> env = fake_driver_env(true, /*trial=*/true);
  const RunResult few = run_with_env(env, {NIMBLE_TEST_CLI, "run", "-o", dir + "/few.json", "--", probe_path(), "unrepeating-few"});
  ASSERT_EQ(few.exit_code, 0) << few.output;
  const std::string few_why = read_json(dir + "/few.run.json").value("nothing_replayed_because", std::string());
  EXPECT_NE(few_why.find("no repeating period was found in "), std::string::npos) << few_why;
  EXPECT_NE(few_why.find("Run more iterations: the detector needs three identical ones in a row"), std::string::npos)
      << few_why;

  const RunResult many = run_with_env(env, {NIMBLE_TEST_CLI, "run", "-o", dir + "/many.json", "--", probe_path(),
                                            "overhead-unrepeating"});
  ASSERT_EQ(many.exit_code, 0) << many.output;
  const nlohmann::json many_summary = read_json(dir + "/many.run.json");
  const std::string many_why = many_summary.value("nothing_replayed_because", std::string());
  // (The host syncs of the 131072 tasks nimble run looked at before it rested: NIMBLE_RUN_LOOK.)
  EXPECT_NE(many_why.find("host syncs mark many iterations, yet no three in a row issued the same calls"),
            std::string::npos)
      << many_why;
  EXPECT_NE(many_why.find("no repeating period was found in 131072 tasks (nimble run looked 1 time(s) and rested"),
            std::string::npos)
      << many_why;
  EXPECT_EQ(many_summary.value("look_rests", 0), 1) << many_summary.dump(2);
  EXPECT_EQ(many_why.find("Run more iterations"), std::string::npos) << many_why;
  EXPECT_NE(many.output.find("padding to a few fixed lengths"), std::string::npos) << many.output;
}

// 1000 iterations whose launch shapes never repeat (52000 tasks), then 2000 that do. A look that
// finds nothing in NIMBLE_RUN_LOOK tasks rests for three times as many calls, then six times (the
// wrappers take the idle path meanwhile); the loop is still found, in the look after the rest it
// began in, and replayed from there. Never resting, it is found at once. Results as a plain run's.
TEST(RunCommand, ALookThatFindsNothingRestsAndALoopThatBeginsLaterIsStillFound) {
  const std::string dir = temp_dir();
  const std::string plain_work = work_of(plain_run("unrepeating-then-loop").output);
  const auto run_looking = [&](const std::string& look) {
    const RunResult r = auto_run(dir + "/l" + look + ".json", "unrepeating-then-loop", {"NIMBLE_RUN_LOOK=" + look});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(work_of(r.output), plain_work);
    return read_json(dir + "/l" + look + ".run.json");
  };
  const nlohmann::json resting = run_looking("8192");
  ASSERT_TRUE(resting.is_object());
  EXPECT_EQ(resting.value("look_rests", 0), 2) << resting.dump(2);  // at 8192 tasks, and 8192 after 24576 calls
  ASSERT_EQ(resting["recordings"].size(), 1u) << resting.dump(2);
  EXPECT_EQ(resting["recordings"][0].value("calls", 0), 50);
  // Found in the third look, after 8192 tasks, 24576 calls, 8192 tasks and 49152 calls (51 calls
  // and a sync an iteration): about 1760 of the 3000 iterations had passed.
  EXPECT_GE(resting.value("iterations_replayed", 0), 1150) << resting.dump(2);
  EXPECT_LE(resting.value("iterations_replayed", 0), 1300) << resting.dump(2);
  // What looking cost is counted: the calls of two fruitless looks (8192 tasks each, a sync in 52)
  // and of the one that found the loop, not those of the rests between them.
  const nlohmann::json& looked = resting["looking"];
  EXPECT_GE(looked.value("calls_looked_at", 0), 2 * 8192 * 51 / 52) << looked.dump();
  EXPECT_LE(looked.value("calls_looked_at", 0), 3 * 8192) << looked.dump();
  EXPECT_EQ(looked.value("looks", 0), 2) << looked.dump();
  EXPECT_GT(looked.value("host_ms", 0.0), 0.0) << looked.dump();

  const nlohmann::json looking = run_looking("0");
  ASSERT_TRUE(looking.is_object());
  EXPECT_EQ(looking.value("look_rests", -1), 0) << looking.dump(2);
  EXPECT_GE(looking.value("iterations_replayed", 0), 1990) << looking.dump(2);
  EXPECT_GE(looking["looking"].value("calls_looked_at", 0), 1000 * 51) << looking.dump(2);  // the unrepeating part
}

// A mixture of experts' steps (a copy and a sync after every sixth launch, shapes drawn from the
// routing): when every step routes alike, the step is found though its 33 syncs each end a stretch
// whose last task occurred many times before (the period is looked for where the last 16 tasks
// recur), and replayed; when the routing never repeats, nothing is recorded. Results as plain's.
TEST(RunCommand, AStepWithManySyncsIsFoundWhenItRepeatsAndNothingIsRecordedWhenItDoesNot) {
  const std::string dir = temp_dir();
  const std::string plain_loop = work_of(plain_run("routed-loop").output);
  const RunResult loop = auto_run(dir + "/loop.json", "routed-loop");
  EXPECT_EQ(loop.exit_code, 0) << loop.output;
  EXPECT_EQ(work_of(loop.output), plain_loop);
  const nlohmann::json found = read_json(dir + "/loop.run.json");
  ASSERT_TRUE(found.is_object());
  ASSERT_GE(found["recordings"].size(), 1u) << found.dump(2);
  EXPECT_GE(found.value("iterations_replayed", 0), 300) << found.dump(2);  // of 400

  const std::string plain_routed = work_of(plain_run("overhead-routed").output);
  const RunResult routed = auto_run(dir + "/routed.json", "overhead-routed");
  EXPECT_EQ(work_of(routed.output), plain_routed);
  const nlohmann::json none = read_json(dir + "/routed.run.json");
  ASSERT_TRUE(none.is_object());
  EXPECT_TRUE(none["recordings"].empty()) << none.dump(2);
  EXPECT_EQ(none.value("iterations_replayed", -1), 0);
  EXPECT_GE(none.value("look_rests", 0), 1) << none.dump(2);
}

// A step around an inner loop whose time steps each use new buffers (the GRU seq2seq on the H200,
// which nimble run left for good inside its first step: its decoder's time steps were found first,
// recorded, dropped for moving buffers, and found again three times): finding the known loop again
// does not stop nimble run while looks between find nothing, and the step around it is recorded
// (and dropped: its buffers move too); only then, the program staying in known loops, nimble run
// stops for good. Results as a plain run's.
TEST(RunCommand, AStepAroundAnInnerLoopRecordedAndDroppedIsFoundAfterIt) {
  const std::string dir = temp_dir();
  const RunResult plain = plain_run("nested");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  std::vector<std::string> env = fake_driver_env(true, /*trial=*/true);
  env.push_back("NIMBLE_DEBUG=1");
  const RunResult r = run_with_env(env, {NIMBLE_TEST_CLI, "run", "-o", dir + "/n.json", "--", probe_path(), "nested"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/n.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  ASSERT_GE(summary["recordings"].size(), 2u) << summary["recordings"].dump(2);
  EXPECT_LT(summary["recordings"][0].value("calls", 0u), 318u) << summary["recordings"].dump(2);
  bool step_recorded = false;
  for (const auto& rec : summary["recordings"]) {
    EXPECT_EQ(rec.value("state", ""), "dropped") << rec.dump(2);
    step_recorded = step_recorded || rec.value("calls", 0u) == 318u;
  }
  EXPECT_TRUE(step_recorded) << summary["recordings"].dump(2);
  EXPECT_NE(r.output.find("stopped for good"), std::string::npos) << r.output;
  EXPECT_LT(summary.value("calls_seen", 1u << 30), 60000u) << summary.dump(2);  // of 300 x 318
  EXPECT_EQ(work_of(r.output), work_of(plain.output));
}

// An iteration cut by the program's own event records and waits after every second launch (as
// cuDNN's RNN orders its streams) would replay as a graph per two calls: refused with the reason,
// nothing replayed, the same iteration passed over when found again, and once nimble run stops
// looking the rest runs at the idle cost (nimble run sees no more calls). Results as a plain run's.
TEST(RunCommand, AnIterationCutIntoGraphsOfTwoCallsByTheProgramsEventsIsLeftToTheProgram) {
  const std::string dir = temp_dir();
  const RunResult plain = plain_run("overhead-events");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  std::vector<std::string> env = fake_driver_env(true, /*trial=*/true);
  env.push_back("NIMBLE_DEBUG=1");
  const RunResult r = run_with_env(env, {NIMBLE_TEST_CLI, "run", "-o", dir + "/t.json", "--", probe_path(), "overhead-events"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_EQ(summary.value("iterations_replayed", -1), 0) << summary.dump(2);
  const std::string refused = summary.value("refused", nlohmann::json::array()).dump();
  EXPECT_NE(refused.find("graphs of 2.0 calls on average"), std::string::npos) << summary.dump(2);
  EXPECT_NE(r.output.find("nothing was replayed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("event records, waits and stream changes cut the iteration"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stopped for good"), std::string::npos) << r.output;
  EXPECT_LT(summary.value("calls_seen", 1u << 30), 200000u) << summary.dump(2);  // the probe makes 2000 x 402
  EXPECT_EQ(work_of(r.output), work_of(plain.output));
  EXPECT_EQ(counts(r.output).at("graph_launches"), 0) << r.output;
}

// Buffers rotating among three sets move every kernel's arguments in every iteration, and the
// recorded iteration's are its own: each iteration of the warm-up rewrites every node (the fourth
// into a further exec for a set the first had). That is no reason to drop the recording (further
// execs hold the sets); arguments that are new every iteration are, after the warm-up. With
// NIMBLE_RUN_TRIAL_MOVING=1 they go on to the trial, and one that does not pay (a minimum speedup of
// 100x) drops the recording at once instead of resting it: such buffers never stop moving. Results
// as a plain run's.
TEST(RunCommand, BuffersRotatingAmongThreeSetsGoOnToTheTrialAndBuffersNewEveryIterationDrop) {
  const std::string dir = temp_dir();
  struct Case {
    std::string mode;
    bool trial_moving;
  };
  for (const Case& c : {Case{"overhead-rotating", false}, Case{"overhead-moving", false}, Case{"overhead-moving", true}}) {
    SCOPED_TRACE(c.mode + (c.trial_moving ? ", NIMBLE_RUN_TRIAL_MOVING=1" : ""));
    const RunResult plain = plain_run(c.mode);
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    // (A minimum of 100x: the trial never pays, however fast the fake driver replays.)
    const ProbeRun run = run_overhead_probe(
        dir, {"NIMBLE_RUN_TRIAL=4", "NIMBLE_RUN_MIN_SPEEDUP=100", std::string("NIMBLE_RUN_TRIAL_MOVING=") + (c.trial_moving ? "1" : "0")},
        c.mode);
    if (::testing::Test::HasFailure()) return;
    const nlohmann::json& rec = run.summary["recordings"][0];
    const std::string dropped = rec.value("dropped_because", "");
    const bool moving = c.mode == "overhead-moving";
    EXPECT_EQ(rec.contains("buffers_move"), moving) << rec.dump(2);
    const std::size_t timed = rec.contains("timings") ? rec["timings"]["plain"].value("iterations", 0u) +
                                                            rec["timings"]["replayed"].value("iterations", 0u)
                                                      : 0u;
    if (!moving) {
      // Its warm-up wrote every node for three new sets, then found one again: a trial followed.
      EXPECT_GE(rec["graphs"].value("execs", 0), 2) << rec["graphs"].dump();
      EXPECT_GT(timed, 0u) << rec.dump(2);
    } else if (!c.trial_moving) {
      EXPECT_NE(dropped.find("rewrote most of its graph nodes in every iteration"), std::string::npos) << dropped;
      EXPECT_NE(dropped.find("to addresses none of its recent iterations had"), std::string::npos) << dropped;
      EXPECT_EQ(timed, 0u) << rec.dump(2);  // dropped after its warm-up
    } else {
      EXPECT_GT(timed, 0u) << rec.dump(2);
      // The trial showed no gain: slower, or (a loaded machine: ASan on two cores once timed
      // replayed iterations of 1.6-8.1 ms) phases of two kinds it cannot compare. Either drops it.
      const bool no_gain = dropped.find("did not pay in its trial") != std::string::npos ||
                           dropped.find("its trial could not compare the program's iterations") != std::string::npos;
      EXPECT_TRUE(no_gain) << dropped;
      EXPECT_NE(dropped.find("to addresses none of its recent iterations had), so it is not tried again"), std::string::npos)
          << dropped;
      EXPECT_FALSE(rec.contains("earlier_trial_speedups")) << rec.dump(2);  // one trial, no rest
    }
    EXPECT_NE(work_of(plain.output), "none") << plain.output;
    EXPECT_EQ(work_of(run.result.output), work_of(plain.output)) << "the results differ from a plain run's";
  }
}

// A program whose iteration launches its own CUDA graph, which it updates between launches,
// around eager work: nimble launches the eager work as its graphs and the program's own call
// launches the program's graph in place, as updated, so the work done is exactly a plain run's.
void expect_own_graph_launches_run_in_place(const std::string& mode) {
  SCOPED_TRACE(mode);
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/g.json", mode);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const RunResult plain = plain_run(mode, {"FAKE_DRIVER_GRAPHS=1"});
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output;
  EXPECT_NE(work_of(plain.output), "none");
  const nlohmann::json summary = read_json(dir + "/g.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  const int replayed = summary.value("iterations_replayed", 0);
  EXPECT_GT(replayed, 40) << summary.dump(2);  // of 60
  EXPECT_GE(summary.value("program_graphs_run_in_place", 0), replayed) << summary.dump(2);
  // One graph of nimble's per iteration (the fill kernel): the graph's node and the sync launch nothing.
  EXPECT_EQ(summary.value("segments_launched", 0), replayed) << summary.dump(2);
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary.dump(2);
  EXPECT_NE(r.output.find("launches of the program's own graphs run in place"), std::string::npos) << r.output;
  // Every one of the program's 60 launches happened (nimble's own graphs add the rest).
  EXPECT_GE(counts(r.output).at("graph_launches"), 60 + replayed) << r.output;
}

// The automatic range's window opens on a host function (the first task after the sync that ends an
// iteration). A host function is the program's own call, never one that begins a replayed
// iteration: the recording is armed by its first kernel instead, the iterations are replayed, and
// the host function runs in place every time.
TEST(RunCommand, AnIterationThatBeginsWithAHostFunctionIsArmedByItsFirstKernel) {
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/h.json", "host-function-first");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json trace = read_json(dir + "/h.json");
  ASSERT_TRUE(trace.is_object()) << r.output;
  EXPECT_EQ(trace["tasks"][0].value("kind", ""), "host_func") << "the window did not open on the host function";
  const nlohmann::json summary = read_json(dir + "/h.run.json");
  // Of 30 iterations: each is two steps (the loss goes out on two streams in turn).
  EXPECT_GT(summary.value("iterations_replayed", 0), 20) << summary.dump(2);
  const RunResult plain = plain_run("host-function-first");
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output;
  EXPECT_EQ(counts(r.output, "host_functions=").at("host_functions"), 60) << r.output;

  // With the trial on: its plain and replayed blocks are timed (an iteration runs from the first
  // kernel to the next, the host function last), and the trial decides. (Replay of these tiny
  // iterations is slower: three trials, whose timings under a loaded CI machine spread too much for
  // one round to decide, with rests of 16 and 128 iterations between them.)
  const RunResult t = auto_run(dir + "/t.json", "host-function-first 400", {}, /*trial=*/true);
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const nlohmann::json trial = read_json(dir + "/t.run.json");
  ASSERT_EQ(trial.value("recordings", nlohmann::json::array()).size(), 1u) << trial.dump(2);
  const nlohmann::json& rec = trial["recordings"][0];
  EXPECT_NE(rec.value("state", ""), "trial") << rec.dump(2);
  EXPECT_GT(rec["timings"]["replayed"].value("iterations", 0), 0) << rec.dump(2);
  EXPECT_GT(rec["timings"]["plain"].value("iterations", 0), 0) << rec.dump(2);
  EXPECT_EQ(work_of(t.output), work_of(plain_run("host-function-first 400").output)) << t.output;
}

// Also when the recorded iteration begins with the graph's launch (its nodes first in the trace).
TEST(RunCommand, AProgramsOwnGraphLaunchesRunInPlaceAsItUpdatedThemWhileTheRestIsReplayed) {
  expect_own_graph_launches_run_in_place("own-graph");
  expect_own_graph_launches_run_in_place("own-graph-first");
}

// An iteration made of the program's own graph launch and calls it runs itself (copies to and from
// the host): nothing for nimble to launch, so it steps aside for good, says why in one line, and the
// program's work is what it is without nimble.
TEST(RunCommand, AnIterationOfTheProgramsOwnGraphAloneIsLeftAloneWithTheReason) {
  const std::string dir = temp_dir();
  const RunResult r = nimble_run(dir + "/g.json", "program-graph");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("the iteration launches the program's own CUDA graphs (cuGraphLaunch) and nothing else"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("nimble run: nothing was replayed: " + dir + "/g.json: the iteration launches the program's own"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/g.2.json"));  // recorded once, then left alone
  const nlohmann::json summary = read_json(dir + "/g.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_EQ(summary.value("iterations_replayed", -1), 0);
  EXPECT_NE(summary.value("nothing_replayed_because", "").find("the program's own CUDA graphs"), std::string::npos)
      << summary.dump(2);
  const std::string last = r.output.substr(r.output.rfind("nimble run: nothing was replayed:"));
  EXPECT_NE(last.find("own CUDA graphs"), std::string::npos) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("program-graph", {"FAKE_DRIVER_GRAPHS=1"}).output));
  EXPECT_EQ(counts(r.output, "graph_launches=").at("graph_launches"), 4) << r.output;
}

TEST(RunCommand, HelpExplainsMatchingAndFallBack) {
  const RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, "run", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* text : {"--piece", "--max-streams", "--compare", "mismatch", "TRACE.run.json", "caching allocator",
                           "NIMBLE_RUN_SKIP_LIBRARY", "cudaMallocAsync", "NIMBLE_RUN_TRIAL", "NIMBLE_RUN_RECORDINGS",
                           "TRACE.2.json", "own CUDA graphs"}) {
    EXPECT_NE(r.output.find(text), std::string::npos) << text << " in " << r.output;
  }
}

// The variables nimble run hands the program: its options by their names in the settings list;
// an option not given sets nothing, so the library's default, or the caller's own value, holds.
TEST(RunCommand, OptionsBecomeTheProgramsVariablesAndUnsetOnesLeaveTheCallers) {
  const std::string dir = temp_dir();
  const std::vector<std::string> show = {"--", "sh", "-c", "env | grep -E '^NIMBLE_(RUN|ITERATION|CAPTURE|DEPENDENCIES)'"};
  std::vector<std::string> argv = {NIMBLE_TEST_CLI, "run", "-o", dir + "/t.json", "--piece", "8", "--compare", "3"};
  argv.insert(argv.end(), show.begin(), show.end());
  RunResult r = run_with_env({}, argv);
  for (const char* set : {"NIMBLE_RUN=1\n", "NIMBLE_RUN_PIECE=8\n", "NIMBLE_RUN_COMPARE=3\n", "NIMBLE_ITERATION=2\n",
                          "NIMBLE_CAPTURE_RANGE=auto\n", "NIMBLE_DEPENDENCIES=memory\n"}) {
    EXPECT_NE(r.output.find(set), std::string::npos) << set << " in " << r.output;
  }
  EXPECT_EQ(r.output.find("NIMBLE_RUN_MAX_STREAMS="), std::string::npos) << r.output;

  argv = {NIMBLE_TEST_CLI, "run", "-o", dir + "/t.json"};
  argv.insert(argv.end(), show.begin(), show.end());
  r = run_with_env({"NIMBLE_RUN_PIECE=32"}, argv);
  EXPECT_NE(r.output.find("NIMBLE_RUN_PIECE=32\n"), std::string::npos) << r.output;
}


// A JAX-like step (probe "pool-order"): host functions interleave with the input copies in an
// order that changes from step to step, and the loss goes out on two streams in turn. The automatic
// range does not look at host functions (nimble run never matches them), so it finds the step;
// every later step is replayed, the work a plain run's, every host function run by the program.
TEST(RunCommand, AStepWhoseHostFunctionsInterleaveDifferentlyEachTimeIsFoundAndReplayed) {
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/p.json", "pool-order");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/p.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  // Of 30 iterations: each is two steps (the loss goes out on two streams in turn).
  EXPECT_GT(summary.value("iterations_replayed", 0), 20) << summary.dump(2);
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary.dump(2);
  const RunResult plain = plain_run("pool-order");
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output;
  EXPECT_EQ(counts(r.output, "host_functions=").at("host_functions"), 60 * 5) << r.output;
  // The trial can time these steps: each begins right after the one before, host functions and all.
  const RunResult t = auto_run(dir + "/t.json", "pool-order 400", {}, /*trial=*/true);
  ASSERT_EQ(t.exit_code, 0) << t.output;
  const nlohmann::json trial = read_json(dir + "/t.run.json");
  ASSERT_FALSE(trial.value("recordings", nlohmann::json::array()).empty()) << trial.dump(2);
  const nlohmann::json& rec = trial["recordings"][0];
  EXPECT_TRUE(rec["fallbacks"].empty()) << rec.dump(2);
  // Its trials time both kinds of iteration (which is faster, the fake driver decides; a loaded
  // machine may leave the last one undecided): none "could not time its iterations".
  const bool timed = !rec.value("earlier_trial_speedups", nlohmann::json::array()).empty() ||
                     (rec["timings"]["replayed"].value("iterations", 0) > 0 && rec["timings"]["plain"].value("iterations", 0) > 0);
  EXPECT_TRUE(timed) << rec.dump(2);
  EXPECT_EQ(rec.dump().find("could not time"), std::string::npos) << rec.dump(2);
  EXPECT_EQ(work_of(t.output), work_of(plain_run("pool-order 400").output)) << t.output;
}

// JAX's transfer threads (probe "side-threads"): two pool threads copy inputs in and another copies
// results out, in an order among the compute thread's calls that never repeats, ordered with the
// step by the program's events; the loop never syncs after a start-up that synced often. Their
// calls are the program's own (threads that launched no kernel): the compute thread's step is
// found and replayed, and the work is a plain run's. Looking at every thread, nothing repeats.
TEST(RunCommand, CopiesFromThreadsThatLaunchNoKernelsAreTheProgramsOwn) {
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/s.json", "side-threads");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json summary = read_json(dir + "/s.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_GT(summary.value("iterations_replayed", 0), 150) << summary.dump(2);  // of 300
  EXPECT_TRUE(summary["fallbacks"].empty()) << summary.dump(2);
  const RunResult plain = plain_run("side-threads");
  EXPECT_EQ(work_of(r.output), work_of(plain.output)) << r.output;
  EXPECT_EQ(counts(r.output, "host_functions=").at("host_functions"), 300) << r.output;
  EXPECT_GT(counts(r.output, "graph_launches=").at("graph_launches"), 150) << r.output;
  // The recorded step holds the compute thread's ten kernels and none of the copies or host functions.
  ASSERT_FALSE(summary.value("recordings", nlohmann::json::array()).empty()) << summary.dump(2);
  const nlohmann::json trace = read_json(summary["recordings"][0].value("trace", std::string()));
  ASSERT_TRUE(trace.is_object()) << summary.dump(2);
  int kernels = 0;
  for (const auto& task : trace["tasks"]) kernels += task.value("kind", "") == "kernel";
  EXPECT_EQ(kernels, 10) << trace["tasks"].dump();
  EXPECT_EQ(trace["tasks"].size(), 10u) << trace["tasks"].dump();
  // The summary counts them: two pool threads and the output thread, three calls a step.
  EXPECT_EQ(summary["side_threads"].value("threads", 0), 3) << summary.dump(2);
  EXPECT_EQ(summary["side_threads"].value("calls", 0), 3 * 300) << summary.dump(2);
  EXPECT_NE(r.output.find("nimble run: 900 call(s) of 3 thread(s) that launched no kernel ran as the program's own"),
            std::string::npos) << r.output;

  // With the trial on, whatever it decides (the fake driver's timing), no iteration falls back part way.
  const RunResult t = auto_run(dir + "/t.json", "side-threads 600", {}, /*trial=*/true);
  ASSERT_EQ(t.exit_code, 0) << t.output;
  EXPECT_EQ(work_of(t.output), work_of(plain_run("side-threads 600").output)) << t.output;
  EXPECT_EQ(read_json(dir + "/t.run.json").dump().find("in the middle of"), std::string::npos) << t.output;

  const RunResult every = auto_run(dir + "/e.json", "side-threads", {"NIMBLE_RUN_SIDE_THREADS=0"});
  ASSERT_EQ(every.exit_code, 0) << every.output;
  EXPECT_EQ(work_of(every.output), work_of(plain.output)) << every.output;
  const nlohmann::json none = read_json(dir + "/e.run.json");
  EXPECT_EQ(none.value("iterations_replayed", -1), 0) << none.dump(2);
  EXPECT_EQ(none["side_threads"].value("calls", -1), 0) << none.dump(2);
  EXPECT_NE(none.value("nothing_replayed_because", std::string()).find("no repeating period"), std::string::npos)
      << none.dump(2);
}

// A side thread's copy on the compute stream itself, in the middle of the step (probe
// "side-threads-on-compute"): ordered with the step's kernels by that stream alone, so the kernels
// held back before it go out first, and the iteration falls back there. Every step does so: the
// recording is dropped for it, the work a plain run's.
TEST(RunCommand, ASideThreadsCopyOnTheReplayedStreamMakesHeldCallsGoOutFirst) {
  const std::string dir = temp_dir();
  const RunResult r = auto_run(dir + "/c.json", "side-threads-on-compute");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(work_of(r.output), work_of(plain_run("side-threads-on-compute").output)) << r.output;
  const nlohmann::json summary = read_json(dir + "/c.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  ASSERT_FALSE(summary["fallbacks"].empty()) << summary.dump(2);
  EXPECT_EQ(summary["fallbacks"][0].value("reason", ""),
            "the program issued work from another thread on the replayed iteration's stream in the middle of a "
            "recorded segment")
      << summary.dump(2);
  EXPECT_EQ(summary.value("iterations_replayed", -1), 0) << summary.dump(2);
}

// nimble run stands in for the program: a program in which no iteration repeats ran fine, so
// nimble run exits with its status (0), saying in one line that nothing was replayed and why;
// `nimble record` on the same program fails, having written no trace.
TEST(RunCommand, NothingFoundToRecordKeepsTheProgramsExitStatus) {
  const std::string dir = temp_dir();
  const RunResult r = run_with_env(fake_driver_env(true), {NIMBLE_TEST_CLI, "run", "-o", dir + "/t.json", "--", probe_path(), "interleaved"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // The one line says what the program's libnimble.so saw (two streams whose order changes), and
  // the summary says it too; not the generic advice to run more iterations.
  EXPECT_NE(r.output.find("nimble run: nothing was replayed: nothing was recorded: no repeating period was found in "),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" tasks issued on 2 streams from 1 thread(s)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Run more iterations"), r.output.rfind("Run more iterations")) << r.output;  // the log's line only
  const nlohmann::json summary = read_json(dir + "/t.run.json");
  ASSERT_TRUE(summary.is_object()) << r.output;
  EXPECT_EQ(summary.value("iterations_replayed", -1), 0);
  EXPECT_NE(summary.value("nothing_replayed_because", std::string()).find("nothing was recorded: no repeating period"),
            std::string::npos) << summary.dump();
  // With NIMBLE_DEBUG=1 the log shows the calls the automatic range looked at last, each with its
  // thread and stream (the probe's two streams), to see why nothing repeated.
  std::vector<std::string> debug_env = fake_driver_env(true);
  debug_env.push_back("NIMBLE_DEBUG=1");
  const RunResult debug = run_with_env(debug_env, {NIMBLE_TEST_CLI, "run", "-o", dir + "/d.json", "--", probe_path(), "interleaved"});
  EXPECT_NE(debug.output.find("automatic range: the last 160 calls looked at"), std::string::npos) << debug.output;
  EXPECT_NE(debug.output.find("K0@t0s0"), std::string::npos) << debug.output;
  EXPECT_NE(debug.output.find("@t0s1"), std::string::npos) << debug.output;
  EXPECT_EQ(r.output.find("calls looked at"), std::string::npos) << r.output;  // only when asked for
  const RunResult rec = run_with_env(fake_driver_env(true), {NIMBLE_TEST_CLI, "record", "--capture-range", "auto", "-o", dir + "/r.json", "--", probe_path(), "interleaved"});
  EXPECT_EQ(rec.exit_code, 1) << rec.output;
  // A program that fails keeps its own status too.
  const RunResult failed = run_with_env({}, {NIMBLE_TEST_CLI, "run", "-o", dir + "/f.json", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(failed.exit_code, 7) << failed.output;
  const RunResult missing = run_with_env({}, {NIMBLE_TEST_CLI, "run", "-o", dir + "/m.json", "--", "/no/such/program"});
  EXPECT_EQ(missing.exit_code, 127) << missing.output;
  EXPECT_NE(missing.output.find("nimble run: cannot run /no/such/program"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace nimble::test
