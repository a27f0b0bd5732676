// Reading valid traces into the typed model.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

TEST(Parse, MinimalTrace) {
  const auto r = parse_trace(R"({"format": "nimble-trace", "version": 1, "tasks": []})");
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.items.empty());
  EXPECT_EQ(r.trace->version, 1);
  EXPECT_TRUE(r.trace->tasks.empty());
  EXPECT_FALSE(r.trace->schedule);
}

TEST(Parse, CoreTaskFields) {
  const auto r = parse_trace(trace_text(R"(
    {"id": 10, "kind": "memcpy", "deps": [], "duration_us": 12, "stream": 2},
    {"id": 20, "kind": "kernel", "deps": [10], "duration_us": 0.25},
    {"id": -3, "kind": "sync", "deps": [10, 20]})"));
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  const auto& t = r.trace->tasks;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].id, 10);
  EXPECT_EQ(t[0].kind, "memcpy");
  EXPECT_TRUE(t[0].deps.empty());
  EXPECT_EQ(t[0].duration_us, 12.0);
  EXPECT_EQ(t[0].stream, 2);
  EXPECT_EQ(t[1].deps, std::vector<TaskId>{10});
  EXPECT_EQ(t[1].duration_us, 0.25);
  EXPECT_FALSE(t[1].stream);
  EXPECT_EQ(t[2].id, -3);
  EXPECT_FALSE(t[2].duration_us);
}

TEST(Parse, ScheduleSections) {
  const auto r = parse_trace(trace_text(R"(
    {"id": 0, "kind": "k", "deps": [], "schedule": {"stream": 0, "waits": []}},
    {"id": 1, "kind": "k", "deps": [], "schedule": {"stream": 1, "priority": 2}},
    {"id": 2, "kind": "k", "deps": [0, 1], "schedule": {"stream": 0, "waits": [1]}})",
                                        R"("schedule": {"algorithm": "nimble", "streams": 2, "syncs": 1, "makespan_us": 3.5},)"));
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  ASSERT_TRUE(r.trace->schedule);
  EXPECT_EQ(r.trace->schedule->algorithm, "nimble");
  EXPECT_EQ(r.trace->schedule->streams, 2);
  EXPECT_EQ(r.trace->schedule->syncs, 1);
  EXPECT_EQ(r.trace->schedule->extra.at("makespan_us"), 3.5);
  const auto& t = r.trace->tasks;
  EXPECT_EQ(t[1].schedule->stream, 1);
  EXPECT_TRUE(t[1].schedule->waits.empty()) << "waits defaults to []";
  EXPECT_EQ(t[1].schedule->extra.at("priority"), 2);
  EXPECT_EQ(t[2].schedule->waits, std::vector<TaskId>{1});
}

TEST(Parse, UnknownFieldsGoToExtraInOrder) {
  const auto r = parse_trace(R"({"zeta": 1, "format": "nimble-trace", "alpha": [1, 2], "version": 1,
      "tasks": [{"note": "n", "id": 0, "kind": "k", "deps": [], "args": {"bytes": ""}, "aa": null}]})");
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  std::vector<std::string> top, task;
  for (const auto& [k, v] : r.trace->extra.items()) top.push_back(k);
  for (const auto& [k, v] : r.trace->tasks[0].extra.items()) task.push_back(k);
  EXPECT_EQ(top, (std::vector<std::string>{"zeta", "alpha"}));
  EXPECT_EQ(task, (std::vector<std::string>{"note", "args", "aa"}));
}

TEST(Parse, ExtremeButValidIds) {
  const auto r = parse_trace(trace_text(R"(
    {"id": 9223372036854775807, "kind": "k", "deps": []},
    {"id": -9223372036854775808, "kind": "k", "deps": [9223372036854775807]})"));
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_EQ(r.trace->tasks[1].deps[0], INT64_MAX);
  EXPECT_EQ(r.trace->tasks[1].id, INT64_MIN);
}

TEST(Parse, WarningsDoNotRejectTheTrace) {
  const auto r = parse_trace(trace_text(R"({"id": 0, "kind": "k", "deps": []},
                                           {"id": 1, "kind": "k", "deps": [0, 0]})"));
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_NE(find(r.diagnostics, Severity::Warning, "more than once", 1, "deps[1]"), nullptr) << dump(r.diagnostics);
}

TEST(Parse, LoadTraceReadsFiles) {
  TempDir dir;
  const auto path = dir / "t.json";
  { std::ofstream(path) << trace_text(R"({"id": 0, "kind": "k", "deps": []})"); }
  const auto r = load_trace(path.string());
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_EQ(r.trace->tasks.size(), 1u);
}

TEST(Parse, LoadTraceReportsMissingFilesAndDirectories) {
  TempDir dir;
  const auto missing = load_trace((dir / "nope.json").string());
  EXPECT_FALSE(missing.trace);
  EXPECT_NE(find(missing.diagnostics, Severity::Error, "No such file"), nullptr) << dump(missing.diagnostics);
  const auto directory = load_trace(dir.path().string());
  EXPECT_FALSE(directory.trace);
  EXPECT_NE(find(directory.diagnostics, Severity::Error, "is a directory"), nullptr) << dump(directory.diagnostics);
}

}  // namespace
}  // namespace nimble::trace::testing
