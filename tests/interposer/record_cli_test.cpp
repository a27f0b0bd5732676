// `nimble record` and `nimble bench` end to end with the fake driver: environment, exit status,
// summary, advice.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace nimble::test {
namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::vector<std::string> fake_driver_env() {
  return {"NIMBLE_LIBCUDA=" + fake_driver_path(), "NIMBLE_CUPTI=0"};
}

// `nimble bench --iterations 3` on a probe mode, with the fake driver's graph functions.
RunResult bench_with_graphs(const std::string& out, const std::string& mode) {
  std::vector<std::string> env = fake_driver_env();
  env.push_back("FAKE_DRIVER_GRAPHS=1");
  return run_with_env(env, {NIMBLE_TEST_CLI, "bench", "-o", out, "--iterations", "3", "--", probe_path(), mode});
}

TEST(RecordCommand, RecordsAndSummarises) {
  const std::string out = temp_dir() + "/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "record", "-o", out, "--", probe_path(), "record"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_NE(r.output.find("tasks        7 (3 kernel, 2 memcpy, 1 memset, 1 sync)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("copied       2 KiB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device       Fake GPU"), std::string::npos) << r.output;
}

TEST(RecordCommand, AMissingFolderForTheTraceIsMade) {
  const std::string out = temp_dir() + "/not/yet/there/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "record", "-o", out, "--", probe_path(), "record"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(out)) << r.output;
  // Only the trace: the write test left nothing behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(std::filesystem::path(out).parent_path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(RecordCommand, AFolderThatCannotBeMadeStopsBeforeTheProgramRuns) {
  const std::string dir = temp_dir();
  std::ofstream(dir + "/a-file") << "not a folder";
  const std::string marker = dir + "/the-program-ran";
  for (const char* verb : {"record", "run"}) {
    const RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, verb, "-o", dir + "/a-file/trace.json", "--", "sh", "-c",
                                          "touch " + marker});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("cannot make the folder " + dir + "/a-file for -o"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("choose another path with -o"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(marker)) << verb;
  }
}

// A NIMBLE_* variable libnimble.so would refuse would make it record nothing at all: nimble says so
// before the program runs, naming the variable and what it accepts. One nimble sets from its own
// options is not the user's to get wrong.
TEST(RecordCommand, ASettingLibnimbleWouldRefuseStopsBeforeTheProgramRuns) {
  const std::string dir = temp_dir();
  const std::string marker = dir + "/the-program-ran";
  for (const char* verb : {"record", "run"}) {
    const RunResult r = run_with_env({"NIMBLE_RUN_STALE=4000000000", "NIMBLE_RUN_MIN_SPEEDUP=fast"},
                                     {NIMBLE_TEST_CLI, verb, "-o", dir + "/t.json", "--", "sh", "-c", "touch " + marker});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(std::string(verb) + ": NIMBLE_RUN_STALE=4000000000 is not a number of calls (a positive "
                                                "integer, at most 2147483647); fix or unset it"),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("NIMBLE_RUN_MIN_SPEEDUP=fast is not a ratio"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(marker)) << verb;
  }
  // Settings each fine alone that libnimble.so refuses together, or a list naming what cannot be.
  for (const std::string& setting : {std::string("NIMBLE_BENCH=3"), std::string("NIMBLE_RUN_SKIP_CALLS=cudnnFoo")}) {
    const RunResult r = run_with_env({setting}, {NIMBLE_TEST_CLI, "run", "-o", dir + "/t.json", "--", "sh", "-c", "touch " + marker});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(setting.substr(0, setting.find('='))), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("; fix or unset it"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(marker)) << setting;
  }
  const RunResult set_by_nimble =
      run_with_env({"NIMBLE_CAPTURE_RANGE=nonsense"}, {NIMBLE_TEST_CLI, "record", "--capture-range", "auto", "-o",
                                                       dir + "/t.json", "--", "sh", "-c", "touch " + marker});
  EXPECT_TRUE(std::filesystem::exists(marker)) << set_by_nimble.output;
}

TEST(RecordCommand, PlaceholdersInTheFolderOfTheTraceAreRefused) {
  const std::string dir = temp_dir();
  const RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, "record", "-o", dir + "/%p/trace.json", "--", "true"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("%p and %r go in the file name, not in the folder"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/%p"));
}

TEST(RecordCommand, TheFolderMadeIsTheOneThePathNamesOnceNormalised) {
  const std::string dir = temp_dir();
  const RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, "record", "-o", dir + "/a/../b/trace.json", "--", "true"});
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/b")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/a")) << r.output;
}

TEST(RecordCommand, AutoRangeOption) {
  const std::string out = temp_dir() + "/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "record", "-o", out, "--capture-range", "auto",
                                                       "--", probe_path(), "auto"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("capture      auto"), std::string::npos) << r.output;
}

// Completed stream queries are host syncs in the trace, but their number per iteration depends on
// timing: the automatic range does not count them, so the iteration is still found.
TEST(RecordCommand, AutoRangeFindsTheIterationOfAProgramThatPollsItsStream) {
  const std::string out = temp_dir() + "/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "record", "-o", out, "--capture-range", "auto",
                                                       "--", probe_path(), "polled"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("capture      auto"), std::string::npos) << r.output;
}

const nlohmann::json* task_of_kind(const nlohmann::json& tasks, const std::string& kind, int nth = 0) {
  for (const auto& t : tasks) {
    if (t.value("kind", "") == kind && nth-- == 0) return &t;
  }
  return nullptr;
}

std::vector<int> deps_of(const nlohmann::json& task) { return task.at("deps").get<std::vector<int>>(); }

// A graph the program built node by node (as XLA's command buffers are) is recorded node by node:
// each node a task with the graph's edges as dependencies (child graphs flattened, empty nodes
// left out), the launch a task after them, and the exec-level update of a kernel node seen.
TEST(RecordCommand, ProgramGraphsAreRecordedNodeByNode) {
  const std::string out = temp_dir() + "/trace.json";
  std::vector<std::string> env = fake_driver_env();
  env.push_back("FAKE_DRIVER_GRAPHS=1");
  const RunResult r = run_with_env(env, {NIMBLE_TEST_CLI, "record", "-o", out, "--", probe_path(), "program-graph"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("host_calls=4"), std::string::npos) << r.output;  // the program's callback ran once a launch
  const nlohmann::json trace = read_json(out);
  ASSERT_TRUE(trace.is_object()) << r.output;
  const auto& tasks = trace.at("tasks");
  // copy in, memset, scale, fill, scale (child), host function, launch, copy out, sync
  ASSERT_EQ(tasks.size(), 9u) << trace.dump(1);
  const auto* launch = task_of_kind(tasks, "graph_launch");
  ASSERT_NE(launch, nullptr) << trace.dump(1);
  EXPECT_EQ(launch->value("graph_nodes", 0), 5);
  const int l = launch->value("id", -1);
  const auto* memset = task_of_kind(tasks, "memset");
  const auto* scale = task_of_kind(tasks, "kernel", 0);
  const auto* fill = task_of_kind(tasks, "kernel", 1);
  const auto* inner = task_of_kind(tasks, "kernel", 2);
  const auto* host = task_of_kind(tasks, "host_func");
  ASSERT_TRUE(memset && scale && fill && inner && host) << trace.dump(1);
  EXPECT_EQ(scale->value("name", "").rfind("scale(", 0), 0u) << scale->dump();
  EXPECT_EQ(fill->value("name", "").rfind("fill(", 0), 0u) << fill->dump();
  EXPECT_EQ(inner->value("name", "").rfind("scale(", 0), 0u) << inner->dump();
  const int copy_in = 0;
  EXPECT_EQ(tasks[0].value("kind", ""), "memcpy");
  // The roots follow the copy in on the launch's stream; the rest follow the graph's edges.
  EXPECT_EQ(deps_of(*memset), std::vector<int>{copy_in});
  EXPECT_EQ(deps_of(*scale).front(), copy_in);
  EXPECT_EQ(deps_of(*fill), std::vector<int>{memset->value("id", -1)});
  EXPECT_EQ(deps_of(*inner), (std::vector<int>{scale->value("id", -1), fill->value("id", -1)}));
  EXPECT_EQ(deps_of(*host), std::vector<int>{inner->value("id", -1)});
  EXPECT_EQ(host->at("dep_reasons").at(std::to_string(inner->value("id", -1))), "graph");
  for (const auto* node : {memset, scale, fill, inner, host}) EXPECT_EQ(node->value("graph_launch", -1), l);
  EXPECT_EQ(deps_of(*launch).size(), 5u);
  // The copy out follows the launch, which stands for every node.
  const auto& copy_out = tasks[static_cast<std::size_t>(l) + 1];
  EXPECT_EQ(copy_out.at("dep_reasons").value(std::to_string(l), ""), "stream") << copy_out.dump();
  // The scalar the program set in the executable graph for iteration 1 (101), not the graph's (5).
  const std::string bytes = scale->at("args").value("bytes", "");
  EXPECT_NE(bytes.find("65000000"), std::string::npos) << bytes;
  EXPECT_EQ(bytes.find("05000000"), std::string::npos) << bytes;
}

// A graph whose executable nimble cannot follow stays one opaque task, with the reason.
TEST(RecordCommand, AProgramGraphNimbleDidNotSeeInstantiatedIsOneOpaqueTask) {
  const std::string out = temp_dir() + "/trace.json";
  std::vector<std::string> env = fake_driver_env();
  env.push_back("FAKE_DRIVER_GRAPHS=1");
  env.push_back("PROBE_GRAPH_UPDATE=1");
  const RunResult r = run_with_env(env, {NIMBLE_TEST_CLI, "record", "-o", out, "--", probe_path(), "program-graph"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json trace = read_json(out);
  ASSERT_TRUE(trace.is_object()) << r.output;
  const auto* graph = task_of_kind(trace.at("tasks"), "graph");
  ASSERT_NE(graph, nullptr) << trace.dump(1);
  EXPECT_EQ(task_of_kind(trace.at("tasks"), "graph_launch"), nullptr);
  EXPECT_EQ(graph->value("opaque_because", ""), "the program updated it with cuGraphExecUpdate") << graph->dump();
}

TEST(RecordCommand, NoTraceIsAnErrorThatSaysWhatToDo) {
  const std::string out = temp_dir() + "/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "record", "-o", out, "--", probe_path(), "auto"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("no trace was written"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cudaProfilerStart()"), std::string::npos) << r.output;
}

TEST(RecordCommand, ExitStatusIsTheProgramsAndSignalsAre128Plus) {
  const std::string out = temp_dir() + "/trace.json";
  RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, "record", "-o", out, "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, 7) << r.output;
  r = run_with_env({}, {NIMBLE_TEST_CLI, "record", "-o", out, "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.exit_code, 128 + 15) << r.output;
  r = run_with_env({}, {NIMBLE_TEST_CLI, "record", "-o", out, "--", "sh", "-c", "echo $NIMBLE_MODE $LD_PRELOAD"});
  EXPECT_NE(r.output.find("record "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libnimble.so"), std::string::npos) << r.output;
}

TEST(RecordCommand, BadCaptureRangeIsRejected) {
  const RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, "record", "-o", "x.json", "--capture-range", "nvtx:", "--", "true"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("cudaProfilerApi, auto or nvtx:NAME"), std::string::npos) << r.output;
}

// The fake driver has what recording needs but not what replay needs (stream capture, graphs,
// cuLaunchKernelEx, ...): the bench runs up to loading the driver functions, writes its results
// with the error, and nimble reports it and fails.
TEST(BenchCommand, FakeDriverLacksReplayFunctions) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "bench", "-o", out, "--iterations", "5", "--",
                                                       probe_path(), "record"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // The recording itself worked and is summarised like `nimble record`'s.
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_NE(r.output.find("nimble bench: " + out + " (program exited with 0)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tasks        7 (3 kernel, 2 memcpy, 1 memset, 1 sync)"), std::string::npos) << r.output;

  const std::string results = dir + "/trace.bench.json";
  ASSERT_TRUE(std::filesystem::exists(results)) << r.output;
  const nlohmann::json bench = read_json(results);
  ASSERT_TRUE(bench.is_object()) << r.output;
  EXPECT_EQ(bench.value("format", ""), "nimble-bench");
  EXPECT_EQ(bench.value("iterations", 0), 5);
  EXPECT_EQ(bench.value("tasks", 0), 7);
  EXPECT_EQ(bench.value("trace", ""), std::filesystem::absolute(out).lexically_normal().string());
  // The trace was scheduled and its plan built (no problems): only the driver was missing.
  ASSERT_TRUE(bench["schedule"].is_object()) << bench.dump(2);
  EXPECT_EQ(bench["schedule"].value("algorithm", ""), "nimble");
  EXPECT_FALSE(bench.contains("problems")) << bench.dump(2);
  const std::string error = bench.value("error", "");
  EXPECT_EQ(error.rfind("the driver lacks ", 0), 0u) << error;
  // (Without FAKE_DRIVER_GRAPHS=1 the fake's capture and graph entries are not handed out.)
  for (const char* missing : {"cuStreamBeginCapture", "cuStreamGetCaptureInfo", "cuMemAllocHost", "cuEventElapsedTime"}) {
    EXPECT_NE(error.find(missing), std::string::npos) << missing << " in " << error;
  }
  // Functions the fake driver has are not listed.
  EXPECT_EQ(error.find("cuStreamCreate,"), std::string::npos) << error;
  EXPECT_EQ(error.find("cuMemcpyHtoDAsync"), std::string::npos) << error;
  ASSERT_TRUE(bench["backends"].is_array());
  EXPECT_TRUE(bench["backends"].empty());
  EXPECT_TRUE(bench["framework_ms"].is_null());  // one profiler range: no earlier iteration timed

  // nimble prints the table with the error line.
  EXPECT_NE(r.output.find("bench (" + results + ", 5 replays each):"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  error: the driver lacks cuStreamDestroy"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("critical path"), std::string::npos) << r.output;
}

// The nodes of a program graph are benched like any other tasks: the launch and the host function
// keep their place and do nothing, and the results say the host function was not called.
TEST(BenchCommand, ProgramGraphNodesAreBenchedAndHostFunctionsNotCalled) {
  const std::string dir = temp_dir();
  const RunResult r = bench_with_graphs(dir + "/trace.json", "program-graph");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("host_calls=4"), std::string::npos) << r.output;  // not one call more
  const nlohmann::json bench = read_json(dir + "/trace.bench.json");
  ASSERT_TRUE(bench.is_object()) << r.output;
  EXPECT_FALSE(bench.contains("problems")) << bench.dump(2);
  EXPECT_FALSE(bench.contains("error")) << bench.dump(2);
  EXPECT_EQ(bench.value("host_functions_skipped", 0), 1);
  ASSERT_EQ(bench["backends"].size(), 4u) << bench.dump(2);
  for (const auto& b : bench["backends"]) {
    if (b.value("backend", "") != "eager-replay") EXPECT_EQ(b.value("memory_check", ""), "same bytes") << b.dump();
  }
  EXPECT_NE(r.output.find("host functions         1 kept in order but not called"), std::string::npos) << r.output;
}

// A recorded iteration with a collective in it (an NCCL-named kernel, as on every rank of a DDP
// program): the trace is a good trace (`nimble check` passes), but the bench refuses to replay
// it, naming the collective and what to do, and replays nothing.
TEST(BenchCommand, AnIterationWithACollectiveIsRefusedNamingIt) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/trace.json";
  const RunResult r = bench_with_graphs(out, "loop-collective");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const nlohmann::json bench = read_json(dir + "/trace.bench.json");
  ASSERT_TRUE(bench.is_object()) << r.output;
  const std::string error = bench.value("error", "");
  EXPECT_NE(error.find("holds 1 collective(s)"), std::string::npos) << error;
  EXPECT_NE(error.find("ncclDevKernel_AllReduce"), std::string::npos) << error;
  EXPECT_NE(error.find("--capture-range"), std::string::npos) << error;
  ASSERT_TRUE(bench["problems"].is_array()) << bench.dump(2);
  EXPECT_EQ(bench["problems"].size(), 1u) << bench.dump(2);
  EXPECT_TRUE(bench["backends"].empty()) << bench.dump(2);
  EXPECT_NE(r.output.find("collective"), std::string::npos) << r.output;
  const RunResult check = run_with_env({}, {NIMBLE_TEST_CLI, "check", out});
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST(BenchCommand, ResultsOfAnEarlierRunAreNotShownAsThisRunsResults) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/trace.json";
  RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "bench", "-o", out, "--", probe_path(), "record"});
  ASSERT_TRUE(std::filesystem::exists(dir + "/trace.bench.json")) << r.output;
  // This time the window is still open at exit: a (truncated) trace is written, no bench runs.
  r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "bench", "-o", out, "--", probe_path(), "exit-open"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("tasks        1 (1 kernel)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no results in " + dir + "/trace.bench.json"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("replays each"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/trace.bench.json"));
}

TEST(BenchCommand, ResultsGoBesideTheTraceWhateverTheEnvironmentSays) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/trace.json";
  std::vector<std::string> env = fake_driver_env();
  env.push_back("NIMBLE_BENCH_OUTPUT=" + dir + "/elsewhere.json");
  const RunResult r = run_with_env(env, {NIMBLE_TEST_CLI, "bench", "-o", out, "--", probe_path(), "record"});
  EXPECT_EQ(r.exit_code, 1) << r.output;  // the fake driver still lacks replay functions
  EXPECT_TRUE(std::filesystem::exists(dir + "/trace.bench.json")) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/elsewhere.json")) << r.output;
  EXPECT_NE(r.output.find("  error: the driver lacks"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no results in"), std::string::npos) << r.output;
}

TEST(BenchCommand, HelpNamesTheFourBackends) {
  const RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, "bench", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* backend : {"eager-replay", "graph-1-stream", "graph-nimble-streams", "graph-from-edges"}) {
    EXPECT_NE(r.output.find(backend), std::string::npos) << backend << " in\n" << r.output;
  }
  EXPECT_NE(r.output.find("--iterations"), std::string::npos) << r.output;
}

TEST(BenchCommand, IterationsOutOfRangeAreRejected) {
  const RunResult r = run_with_env({}, {NIMBLE_TEST_CLI, "bench", "-o", "x.json", "--iterations", "0", "--", "true"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--iterations"), std::string::npos) << r.output;
}


// --max-streams reaches the bench's schedule (recorded in the results); without it, no cap.
TEST(BenchCommand, MaxStreamsCapsTheBenchSchedule) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "bench", "-o", out, "--iterations", "5",
                                                       "--max-streams", "1", "--", probe_path(), "record"});
  EXPECT_EQ(r.exit_code, 1) << r.output;  // the fake driver cannot replay
  const nlohmann::json bench = read_json(dir + "/trace.bench.json");
  ASSERT_TRUE(bench.is_object()) << r.output;
  EXPECT_EQ(bench["schedule"].value("max_streams", 0), 1) << bench.dump(2);
  EXPECT_EQ(bench["schedule"].value("streams", 0), 1) << bench.dump(2);

  // By default the cap is 8; 0 lifts it.
  for (const auto& [flag, cap] : std::vector<std::pair<std::string, int>>{{"", 8}, {"0", 0}}) {
    std::vector<std::string> args = {NIMBLE_TEST_CLI, "bench", "-o", out, "--iterations", "5"};
    if (!flag.empty()) args.insert(args.end(), {"--max-streams", flag});
    args.insert(args.end(), {"--", probe_path(), "record"});
    const RunResult run = run_with_env(fake_driver_env(), args);
    const nlohmann::json results = read_json(dir + "/trace.bench.json");
    ASSERT_TRUE(results.is_object()) << run.output;
    if (cap == 0) EXPECT_TRUE(results["schedule"]["max_streams"].is_null()) << results.dump(2);
    else EXPECT_EQ(results["schedule"].value("max_streams", 0), cap) << results.dump(2);
  }

  const RunResult bad = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "bench", "-o", out, "--max-streams", "-1",
                                                         "--", probe_path(), "record"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("--max-streams"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace nimble::test
