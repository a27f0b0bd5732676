// Writing: unknown fields survive, the layout is canonical, and rewriting is byte-identical.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

Trace load(const std::string& text) {
  auto r = parse_trace(text);
  EXPECT_TRUE(r.trace) << dump(r.diagnostics);
  return r.trace ? std::move(*r.trace) : Trace{};
}

const char* kHandWritten = R"({"tasks": [
  {"kind": "kernel", "note": {"b": [1, 2.5, -0.0, 1e-7, 12345678901234567890], "a": null}, "id": 1, "deps": [],
   "schedule": {"waits": [], "hint": "keep", "stream": 0}, "stream": 0, "duration_us": 3},
  {"id": 2, "deps": [1], "kind": "memcpy", "text": "tab\there, quote \" and unicode é語😀", "flag": true,
   "schedule": {"stream": 1, "waits": [1]}, "duration_us": 0.1}],
 "version": 1, "custom": {"z": 1, "y": [[], {}]},
 "schedule": {"syncs": 1, "streams": 2, "algorithm": "hand", "notes": ["x"]},
 "format": "nimble-trace"})";

TEST(RoundTrip, UnknownFieldsSurviveUnchanged) {
  const json original = json::parse(kHandWritten);
  const json written = json::parse(dump_trace(load(kHandWritten)));
  EXPECT_EQ(written["custom"], original["custom"]);
  EXPECT_EQ(written["schedule"]["notes"], original["schedule"]["notes"]);
  EXPECT_EQ(written["tasks"][0]["note"], original["tasks"][0]["note"]);
  EXPECT_EQ(written["tasks"][0]["note"].dump(), original["tasks"][0]["note"].dump()) << "same types and values";
  EXPECT_EQ(written["tasks"][0]["schedule"]["hint"], "keep");
  EXPECT_EQ(written["tasks"][1]["text"], original["tasks"][1]["text"]);
  EXPECT_EQ(written["tasks"][1]["flag"], true);
}

TEST(RoundTrip, CanonicalFieldOrder) {
  const json written = json::parse(dump_trace(load(kHandWritten)));
  std::vector<std::string> top, task, task_schedule, top_schedule;
  for (const auto& [k, v] : written.items()) top.push_back(k);
  for (const auto& [k, v] : written["tasks"][0].items()) task.push_back(k);
  for (const auto& [k, v] : written["tasks"][0]["schedule"].items()) task_schedule.push_back(k);
  for (const auto& [k, v] : written["schedule"].items()) top_schedule.push_back(k);
  EXPECT_EQ(top, (std::vector<std::string>{"format", "version", "schedule", "custom", "tasks"}));
  EXPECT_EQ(task, (std::vector<std::string>{"id", "kind", "deps", "duration_us", "stream", "note", "schedule"}));
  EXPECT_EQ(task_schedule, (std::vector<std::string>{"stream", "waits", "hint"}));
  EXPECT_EQ(top_schedule, (std::vector<std::string>{"algorithm", "streams", "syncs", "notes"}));
}

TEST(RoundTrip, RewritingIsByteIdentical) {
  const std::string first = dump_trace(load(kHandWritten));
  const std::string second = dump_trace(load(first));
  EXPECT_EQ(first, second);
  EXPECT_EQ(dump_trace(load(second)), second);
}

TEST(RoundTrip, LayoutIsPrettyAndStable) {
  std::string big;  // 31 numbers: too long for one line
  for (int i = 0; i < 30; ++i) big += "12345, ";
  big += "1";
  const std::string text = dump_trace(load(trace_text(R"({"id": 0, "kind": "k", "deps": [], "duration_us": 2.0,
      "launch": {"grid": [1, 1, 1], "block": [256, 1, 1]}, "big": [)" + big + "]}")));
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.rfind("{\n  \"format\": \"nimble-trace\",\n  \"version\": 1,\n  \"tasks\": [\n    {\n      \"id\": 0,", 0), 0u) << text;
  EXPECT_NE(text.find("      \"duration_us\": 2,\n"), std::string::npos) << "whole microseconds without fraction\n" << text;
  EXPECT_NE(text.find("      \"launch\": {\"grid\": [1, 1, 1], \"block\": [256, 1, 1]},\n"), std::string::npos) << text;
  EXPECT_NE(text.find("      \"big\": [\n        12345,\n        12345,\n"), std::string::npos) << text;
}

TEST(RoundTrip, DurationsKeepTheirValue) {
  Trace t = trace_with_deps({{}, {}, {}});
  t.tasks[0].duration_us = 0.1;
  t.tasks[1].duration_us = 1e-9;
  t.tasks[2].duration_us = 123456789.0;
  const Trace back = load(dump_trace(t));
  EXPECT_EQ(back.tasks[0].duration_us, 0.1);
  EXPECT_EQ(back.tasks[1].duration_us, 1e-9);
  EXPECT_EQ(back.tasks[2].duration_us, 123456789.0);
}

TEST(RoundTrip, ToJsonMatchesTheWrittenText) {
  const Trace t = load(kHandWritten);
  EXPECT_EQ(json::parse(dump_trace(t)), to_json(t));
}

TEST(RoundTrip, InMemoryTracesWithBadUtf8StillWriteValidJson) {
  Trace t = trace_with_deps({{}});
  t.tasks[0].extra["name"] = std::string("k\xFF\xFEz");
  const auto r = parse_trace(dump_trace(t));
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_EQ(r.trace->tasks[0].extra["name"], "k\xEF\xBF\xBD\xEF\xBF\xBDz");
}

TEST(RoundTrip, TypedFieldsWinOverCollidingExtras) {
  Trace t = trace_with_deps({{}});
  t.tasks[0].extra["id"] = 99;
  t.extra["format"] = "other";
  const json written = json::parse(dump_trace(t));
  EXPECT_EQ(written["tasks"][0]["id"], 0);
  EXPECT_EQ(written["format"], "nimble-trace");
  EXPECT_EQ(written["tasks"][0].size(), 3u);
}

TEST(RoundTrip, PrettyJsonIsAvailableForOtherDocuments) {
  EXPECT_EQ(pretty_json(json::parse(R"({"a": [1, 2], "b": {"c": "d"}})")), R"({"a": [1, 2], "b": {"c": "d"}})");
  const json wide = json::parse(R"({"a": [{"x": 1, "y": [1, 2, 3]}, {"x": 2, "y": [4, 5, 6]}], "b": ")" + std::string(80, 'z') + "\"}");
  EXPECT_EQ(pretty_json(wide), "{\n  \"a\": [{\"x\": 1, \"y\": [1, 2, 3]}, {\"x\": 2, \"y\": [4, 5, 6]}],\n  \"b\": \"" +
                                   std::string(80, 'z') + "\"\n}");
}

}  // namespace
}  // namespace nimble::trace::testing
