// Bad input never crashes or hangs: each case ends in a clear diagnostic, no trace, and fast.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

// Parses `text`, expects it refused quickly, and returns the diagnostics.
Diagnostics refused_fast(const std::string& text) {
  const double start = cpu_seconds();
  const auto r = parse_trace(text);
  const double seconds = cpu_seconds() - start;
  EXPECT_FALSE(r.trace);
  EXPECT_TRUE(r.diagnostics.has_errors());
  EXPECT_LT(seconds, fast_budget_seconds());
  return r.diagnostics;
}

TEST(Robustness, MillionDeepArrays) {
  const Diagnostics d = refused_fast(std::string(1000000, '['));
  ASSERT_EQ(d.items.size(), 1u) << dump(d);
  EXPECT_NE(d.items[0].message.find("nested more than 256 levels"), std::string::npos);
  EXPECT_EQ(d.items[0].where, "line 1, column 257");
}

TEST(Robustness, MillionDeepObjectsInsideATask) {
  std::string deep;
  for (int i = 0; i < 1000000; ++i) deep += "{\"a\":";
  const Diagnostics d = refused_fast(trace_text(R"({"id": 0, "kind": "k", "deps": [], "x": )" + deep));
  EXPECT_NE(d.items[0].message.find("nested more than 256 levels"), std::string::npos) << dump(d);
}

TEST(Robustness, DeepButAllowedNestingRoundTrips) {
  const std::string deep = std::string(250, '[') + "1" + std::string(250, ']');
  const auto r = parse_trace(trace_text(R"({"id": 0, "kind": "k", "deps": [], "x": )" + deep + "}"));
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  const std::string text = dump_trace(*r.trace);
  EXPECT_EQ(dump_trace(*parse_trace(text).trace), text);
}

TEST(Robustness, EveryTruncationOfARealTraceIsRefused) {
  const std::string full = read_file(source_dir() / "docs/examples/tiny_scheduled.json");
  ASSERT_GT(full.size(), 1000u);
  // Whitespace after the closing brace is not content: stop before it.
  const std::size_t content = full.find_last_not_of(" \n") + 1;
  for (std::size_t size = 0; size < content; ++size) {
    const auto r = parse_trace(full.substr(0, size));
    ASSERT_FALSE(r.trace) << "accepted a prefix of " << size << " bytes";
    ASSERT_TRUE(r.diagnostics.has_errors());
  }
  EXPECT_TRUE(parse_trace(full.substr(0, content)).trace);
}

TEST(Robustness, CorruptedBytesNeverCrash) {
  const std::string original = read_file(source_dir() / "docs/examples/tiny.json");
  std::mt19937 rng(1);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = original;
    for (int k = 0; k < 1 + round % 4; ++k) text[rng() % text.size()] = static_cast<char>(rng() % 256);
    const auto r = parse_trace(text);
    ASSERT_EQ(r.trace.has_value(), !r.diagnostics.has_errors());
    if (r.trace) {
      ++accepted;  // then it must also write and read back
      ASSERT_TRUE(parse_trace(dump_trace(*r.trace)).trace);
    }
  }
  EXPECT_LT(accepted, 3000) << "corruption should be noticed at least sometimes";
}

TEST(Robustness, RandomBinaryData) {
  std::mt19937 rng(3);
  std::string text(1 << 20, '\0');
  for (auto& c : text) c = static_cast<char>(rng());
  refused_fast(text);
  refused_fast(std::string(1000, '\0'));
}

TEST(Robustness, HundredMegabyteTraceLoadsFast) {
  // About 100 MB of realistic tasks: the size is no reason to refuse, but it must not be slow.
  std::string tasks;
  tasks.reserve(105u << 20);
  int n = 0;
  while (tasks.size() < (100u << 20)) {
    if (n) tasks += ",\n";
    tasks += R"({"id": )" + std::to_string(n) + R"(, "kind": "kernel", "deps": [)" + (n ? std::to_string(n - 1) : "") +
             R"json(], "duration_us": 3.25, "name": "void at::native::vectorized_elementwise_kernel<4>(int)", "launch": {"grid": [80, 1, 1], "block": [128, 1, 1]}})json";
    ++n;
  }
  const std::string text = trace_text(tasks);
  const double start = cpu_seconds();
  const auto r = parse_trace(text);
  const double seconds = cpu_seconds() - start;
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_EQ(r.trace->tasks.size(), static_cast<std::size_t>(n));
  // About 1.3 s of CPU on an idle machine for 540,000 tasks; twice the usual budget leaves room
  // for a CI machine busy with other builds (an accidental quadratic step would take minutes).
  EXPECT_LT(seconds, 2 * fast_budget_seconds());

  // The same file cut short: the error is found at the end, just as fast.
  const double again = cpu_seconds();
  const Diagnostics d = refused_fast(text.substr(0, text.size() - 10));
  EXPECT_LT(cpu_seconds() - again, fast_budget_seconds());
  EXPECT_NE(d.items[0].message.find("truncated"), std::string::npos);
}

TEST(Robustness, HundredMegabyteString) {
  const std::string huge(100u << 20, 'a');
  const auto ok = parse_trace(trace_text("", "\"blob\": \"" + huge + "\","));
  EXPECT_TRUE(ok.trace) << dump(ok.diagnostics);
  const Diagnostics d = refused_fast("{\n  \"format\": \"nimble-trace\",\n  \"blob\": \"" + huge);  // never closed
  EXPECT_LT(d.items[0].message.size(), 200u);
  EXPECT_EQ(d.items[0].where, "line 3, column 11") << "at the opening quote";
}

TEST(Robustness, ObjectWithMillionsOfKeys) {
  std::string members;
  members.reserve(40u << 20);
  for (int i = 0; members.size() < (32u << 20); ++i) members += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  members += "\"k7\": 0";  // one duplicate, at the very end
  const Diagnostics d = refused_fast(trace_text("", "\"table\": {" + members + "},"));
  ASSERT_EQ(d.error_count(), 1u) << dump(d);
  EXPECT_EQ(d.items[0].field, "table.k7");
}

TEST(Robustness, MillionsOfBadTasksGiveACappedReport) {
  std::string tasks;
  for (int i = 0; i < 200000; ++i) tasks += std::string(i ? "," : "") + "\"task\"";
  const Diagnostics d = refused_fast(trace_text(tasks));
  EXPECT_EQ(d.error_count(), 200000u);
  EXPECT_EQ(d.items.size(), d.max_items);
  EXPECT_NE(d.format("f").find("f: note: 199000 more error(s)"), std::string::npos);
}

TEST(Robustness, OversizedFileIsRefusedBeforeReading) {
  TempDir dir;
  const auto path = dir / "huge.json";
  { std::ofstream(path) << "{"; }
  std::filesystem::resize_file(path, kMaxTraceBytes + 1);  // sparse: costs no disk or time
  const double start = cpu_seconds();
  const auto r = load_trace(path.string());
  EXPECT_LT(cpu_seconds() - start, 0.5);
  EXPECT_FALSE(r.trace);
  ASSERT_EQ(r.diagnostics.items.size(), 1u) << dump(r.diagnostics);
  EXPECT_NE(r.diagnostics.items[0].message.find("nimble reads traces of up to"), std::string::npos);
}

}  // namespace
}  // namespace nimble::trace::testing
