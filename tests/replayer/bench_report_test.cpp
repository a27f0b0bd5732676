// The bench report: lower bounds from the trace, the results as JSON and as the table
// `nimble bench` prints, and where the results go by default.
#include <gtest/gtest.h>

#include <sstream>

#include "nimble/replayer/bench_report.hpp"
#include "test_util.hpp"

namespace nimble::replayer {
namespace {

using test::document;
using test::parse;
using trace::json;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ---------------------------------------------------------------------------------------------
// trace_bounds

TEST(TraceBounds, SerialSumAndCriticalPathOfADiamond) {
  // A diamond 0 (10 us) -> {1 (5), 2 (20)} -> 3 (1), and apart from it 4 (a sync, no
  // duration) -> 5 (7).
  const trace::Trace trace = parse(document(R"(
    {"id": 0, "kind": "kernel", "deps": [], "duration_us": 10},
    {"id": 1, "kind": "kernel", "deps": [0], "duration_us": 5},
    {"id": 2, "kind": "kernel", "deps": [0], "duration_us": 20},
    {"id": 3, "kind": "kernel", "deps": [2, 1], "duration_us": 1},
    {"id": 4, "kind": "sync", "deps": []},
    {"id": 5, "kind": "kernel", "deps": [4], "duration_us": 7})"));
  const TraceBounds b = trace_bounds(trace);
  EXPECT_DOUBLE_EQ(b.serial_us, 43.0);
  EXPECT_DOUBLE_EQ(b.critical_path_us, 31.0);  // 0 -> 2 -> 3
  EXPECT_EQ(b.tasks_with_duration, 5u);
}

TEST(TraceBounds, CriticalPathFollowsTheLongestBranchWhateverItsPosition) {
  // The long branch is issued first, the short one last: the bound must not depend on order.
  const trace::Trace trace = parse(document(R"(
    {"id": 10, "kind": "kernel", "deps": [], "duration_us": 100},
    {"id": 20, "kind": "kernel", "deps": [], "duration_us": 1},
    {"id": 30, "kind": "kernel", "deps": [20], "duration_us": 2},
    {"id": 40, "kind": "kernel", "deps": [30], "duration_us": 3})"));
  const TraceBounds b = trace_bounds(trace);
  EXPECT_DOUBLE_EQ(b.serial_us, 106.0);
  EXPECT_DOUBLE_EQ(b.critical_path_us, 100.0);
}

TEST(TraceBounds, NoDurations) {
  const TraceBounds none = trace_bounds(parse(document(R"({"id": 0, "kind": "kernel", "deps": []})")));
  EXPECT_EQ(none.serial_us, 0.0);
  EXPECT_EQ(none.critical_path_us, 0.0);
  EXPECT_EQ(none.tasks_with_duration, 0u);
  const TraceBounds empty = trace_bounds(parse(document("")));
  EXPECT_EQ(empty.serial_us, 0.0);
  EXPECT_EQ(empty.tasks_with_duration, 0u);
}

// ---------------------------------------------------------------------------------------------
// bench_to_json

BackendResult ok(const std::string& name, double median, std::size_t nodes, const std::string& verified) {
  BackendResult b;
  b.backend = name;
  b.median_ms = median;
  b.p10_ms = median * 0.9;
  b.p90_ms = median * 1.1;
  b.graph_nodes = nodes;
  b.verified = verified;
  return b;
}

BackendResult failed(const std::string& name, const std::string& error) {
  BackendResult b;
  b.backend = name;
  b.error = error;
  return b;
}

BenchResult sample_result() {
  BenchResult r;
  r.saved_bytes = 123456;
  r.backends = {ok("eager-replay", 4.0, 0, "reference"), ok("graph-1-stream", 5.0, 40, "same bytes"),
                ok("graph-nimble-streams", 2.5, 40, "same bytes"),
                failed("graph-from-edges", "cuGraphInstantiate (graph-from-edges) failed: CUDA_ERROR_INVALID_VALUE")};
  return r;
}

TraceBounds sample_bounds() {
  TraceBounds b;
  b.serial_us = 36000;
  b.critical_path_us = 1500;
  b.tasks_with_duration = 9;
  return b;
}

TEST(BenchJson, FieldsAndBackends) {
  const json schedule = {{"algorithm", "nimble"}, {"streams", 3}, {"syncs", 2}};
  const json j = bench_to_json(sample_result(), sample_bounds(), 10.0, schedule);
  EXPECT_EQ(j["framework_ms"], 10.0);
  EXPECT_EQ(j["serial_us"], 36000.0);
  EXPECT_EQ(j["critical_path_us"], 1500.0);
  EXPECT_EQ(j["tasks_with_duration"], 9);
  EXPECT_EQ(j["saved_bytes"], 123456);
  EXPECT_EQ(j["schedule"], schedule);
  EXPECT_FALSE(j.contains("error"));
  ASSERT_EQ(j["backends"].size(), 4u);

  const json& eager = j["backends"][0];
  EXPECT_EQ(eager["backend"], "eager-replay");
  EXPECT_EQ(eager["median_ms"], 4.0);
  EXPECT_DOUBLE_EQ(eager["p10_ms"].get<double>(), 3.6);
  EXPECT_DOUBLE_EQ(eager["p90_ms"].get<double>(), 4.4);
  EXPECT_FALSE(eager.contains("graph_nodes"));  // eager replay has no graph
  EXPECT_EQ(eager["memory_check"], "reference");
  EXPECT_FALSE(eager.contains("error"));

  EXPECT_EQ(j["backends"][2]["backend"], "graph-nimble-streams");
  EXPECT_EQ(j["backends"][2]["graph_nodes"], 40);
  EXPECT_EQ(j["backends"][2]["memory_check"], "same bytes");

  const json& edges = j["backends"][3];
  EXPECT_EQ(edges["backend"], "graph-from-edges");
  EXPECT_EQ(edges["error"], "cuGraphInstantiate (graph-from-edges) failed: CUDA_ERROR_INVALID_VALUE");
  EXPECT_FALSE(edges.contains("median_ms"));
  EXPECT_FALSE(edges.contains("memory_check"));
}

TEST(BenchJson, NoFrameworkTimeIsNullAndAnErrorIsKept) {
  BenchResult r;
  r.error = "the driver lacks cuGraphLaunch";
  const json j = bench_to_json(r, TraceBounds{}, std::nullopt, nullptr);
  EXPECT_TRUE(j["framework_ms"].is_null());
  EXPECT_TRUE(j["schedule"].is_null());
  EXPECT_EQ(j["error"], "the driver lacks cuGraphLaunch");
  EXPECT_TRUE(j["backends"].is_array());
  EXPECT_TRUE(j["backends"].empty());
  EXPECT_EQ(j["saved_bytes"], 0);
}

// ---------------------------------------------------------------------------------------------
// bench_table

// The whitespace-separated columns of the table line that starts with `name`.
std::vector<std::string> row(const std::string& table, const std::string& name) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first != name) continue;
    std::vector<std::string> columns = {first};
    for (std::string w; words >> w;) columns.push_back(w);
    return columns;
  }
  return {};
}

TEST(BenchTable, RatiosAgainstTheProgramAndTheSingleStreamGraph) {
  const std::string table = bench_table(bench_to_json(sample_result(), sample_bounds(), 10.0, nullptr));
  // backend, median, p10, p90, nodes, vs program, vs 1-stream, memory check...
  const auto streams = row(table, "graph-nimble-streams");
  ASSERT_EQ(streams.size(), 9u) << table;
  EXPECT_EQ(streams[1], "2.500");
  EXPECT_EQ(streams[2], "2.250");
  EXPECT_EQ(streams[3], "2.750");
  EXPECT_EQ(streams[4], "40");
  EXPECT_EQ(streams[5], "4.00x");  // 10 ms program / 2.5 ms
  EXPECT_EQ(streams[6], "2.00x");  // 5 ms graph-1-stream / 2.5 ms
  EXPECT_EQ(streams[7] + " " + streams[8], "same bytes");

  const auto eager = row(table, "eager-replay");
  ASSERT_EQ(eager.size(), 8u) << table;
  EXPECT_EQ(eager[1], "4.000");
  EXPECT_EQ(eager[4], "-");  // no graph nodes
  EXPECT_EQ(eager[5], "2.50x");
  EXPECT_EQ(eager[6], "1.25x");
  EXPECT_EQ(eager[7], "reference");

  const auto single = row(table, "graph-1-stream");
  ASSERT_EQ(single.size(), 9u) << table;
  EXPECT_EQ(single[5], "2.00x");
  EXPECT_EQ(single[6], "1.00x");

  EXPECT_TRUE(contains(table, "vs program")) << table;
  EXPECT_TRUE(contains(table, "vs 1-strm")) << table;
  const auto program = row(table, "program");
  ASSERT_EQ(program.size(), 3u) << table;  // "program (eager) 10.000"
  EXPECT_EQ(program[2], "10.000");
}

TEST(BenchTable, FailedBackendShowsFailedWithItsError) {
  const std::string table = bench_table(bench_to_json(sample_result(), sample_bounds(), 10.0, nullptr));
  EXPECT_TRUE(contains(table, "  graph-from-edges: FAILED: cuGraphInstantiate (graph-from-edges) failed: "
                              "CUDA_ERROR_INVALID_VALUE\n"))
      << table;
  EXPECT_FALSE(contains(table, "error:")) << table;  // the bench as a whole ran
}

TEST(BenchTable, BoundsInMilliseconds) {
  const std::string table = bench_table(bench_to_json(sample_result(), sample_bounds(), 10.0, nullptr));
  EXPECT_TRUE(contains(table, "sum of task times      36.000 ms")) << table;
  EXPECT_TRUE(contains(table, "critical path          1.500 ms")) << table;
}

TEST(BenchTable, WithoutProgramTimeOrSingleStreamGraphRatiosAreDashes) {
  BenchResult r;
  r.backends = {ok("eager-replay", 4.0, 0, "reference"), failed("graph-1-stream", "boom")};
  const std::string table = bench_table(bench_to_json(r, TraceBounds{}, std::nullopt, nullptr));
  EXPECT_TRUE(row(table, "program").empty()) << table;  // no "program (eager)" line
  const auto eager = row(table, "eager-replay");
  ASSERT_EQ(eager.size(), 8u) << table;
  EXPECT_EQ(eager[5], "-");
  EXPECT_EQ(eager[6], "-");
  EXPECT_TRUE(contains(table, "graph-1-stream: FAILED: boom")) << table;
}

TEST(BenchTable, ErrorLineWhenNothingRan) {
  BenchResult r;
  r.error = "the driver lacks cuGraphLaunch, cuMemGetInfo";
  const std::string table = bench_table(bench_to_json(r, TraceBounds{}, std::nullopt, nullptr));
  EXPECT_TRUE(contains(table, "  error: the driver lacks cuGraphLaunch, cuMemGetInfo\n")) << table;
  EXPECT_TRUE(contains(table, "median ms")) << table;  // the header is still there
  EXPECT_TRUE(contains(table, "sum of task times      0.000 ms")) << table;
}

TEST(BenchTable, ReadsAResultsFileWithExtraFields) {
  // What the interposer writes: bench_to_json's fields plus format, trace, tasks, ...
  const json bench = json::parse(R"({"format": "nimble-bench", "version": 1, "tasks": 3, "iterations": 5,
      "framework_ms": 3.0, "serial_us": 1000, "critical_path_us": 500,
      "backends": [{"backend": "graph-1-stream", "median_ms": 1.5, "p10_ms": 1.4, "p90_ms": 1.6,
                    "graph_nodes": 3, "memory_check": "same bytes"}]})");
  const std::string table = bench_table(bench);
  const auto single = row(table, "graph-1-stream");
  ASSERT_EQ(single.size(), 9u) << table;
  EXPECT_EQ(single[5], "2.00x");
  EXPECT_EQ(single[6], "1.00x");
  EXPECT_TRUE(contains(table, "sum of task times      1.000 ms")) << table;
}

// ---------------------------------------------------------------------------------------------
// default_bench_path

TEST(DefaultBenchPath, ReplacesTheJsonSuffix) {
  EXPECT_EQ(default_bench_path("a/t.json"), "a/t.bench.json");
  EXPECT_EQ(default_bench_path("/runs/resnet.trace.json"), "/runs/resnet.trace.bench.json");
  EXPECT_EQ(default_bench_path("t.json"), "t.bench.json");
}

TEST(DefaultBenchPath, AppendsWhenThereIsNoJsonSuffix) {
  EXPECT_EQ(default_bench_path("t"), "t.bench.json");
  EXPECT_EQ(default_bench_path("dir.json/trace"), "dir.json/trace.bench.json");
  EXPECT_EQ(default_bench_path("t.json.gz"), "t.json.gz.bench.json");
  EXPECT_EQ(default_bench_path(".json"), ".json.bench.json");  // a name, not a suffix
}

}  // namespace
}  // namespace nimble::replayer
