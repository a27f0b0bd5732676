// `nimble export` end to end: runs the real executable (built with cli/export.cpp registered).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "export_test_support.hpp"

#ifdef NIMBLE_EXE

namespace nimble::export_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

class ExportCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nimble_export_cli_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  RunResult nimble(const std::string& args) { return run_shell(std::string(NIMBLE_EXE) + " " + args); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string example(const std::string& name) const { return shell_quote(example_path(name)); }

  fs::path dir_;
};

TEST_F(ExportCli, PerfettoToFile) {
  const auto run = nimble("export --format perfetto " + example("inception_block.json") + " -o " +
                          shell_quote(path("out.json")));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("ui.perfetto.dev"), std::string::npos) << run.out;
  const json doc = json::parse(read_text(path("out.json")));
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::size_t slices = 0;
  for (const auto& e : doc["traceEvents"]) slices += e["ph"] == "X";
  EXPECT_EQ(slices, 2u * 40u);
  // No temporary file left behind.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1u);
}

TEST_F(ExportCli, DashWritesStdoutAndKeepsItClean) {
  const auto to_file = nimble("export --format perfetto " + example("tiny.json") + " -o " + shell_quote(path("a.json")));
  ASSERT_EQ(to_file.status, 0) << to_file.err;
  const auto to_stdout = nimble("export --format perfetto " + example("tiny.json") + " -o -");
  ASSERT_EQ(to_stdout.status, 0) << to_stdout.err;
  EXPECT_EQ(to_stdout.out, read_text(path("a.json")));
  EXPECT_NE(to_stdout.err.find("<stdout>"), std::string::npos) << to_stdout.err;  // the summary went to stderr

  const auto dot = nimble("export --format dot " + example("tiny.json") + " -o -");
  ASSERT_EQ(dot.status, 0) << dot.err;
  EXPECT_TRUE(parse_dot(dot.out).ok) << parse_dot(dot.out).error;
}

TEST_F(ExportCli, StdinInput) {
  const auto run = nimble("export --format dot - -o - < " + example("tiny_scheduled.json"));
  ASSERT_EQ(run.status, 0) << run.err;
  const DotFile dot = parse_dot(run.out);
  ASSERT_TRUE(dot.ok) << dot.error;
  EXPECT_EQ(dot.nodes.size(), 6u);
}

TEST_F(ExportCli, DotToFileRendersWithGraphviz) {
  const auto run = nimble("export --format dot " + example("inception_block.json") + " -o " + shell_quote(path("g.dot")));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("dot -Tsvg"), std::string::npos) << run.out;
  const DotFile dot = parse_dot(read_text(path("g.dot")));
  ASSERT_TRUE(dot.ok) << dot.error;
  EXPECT_EQ(dot.nodes.size(), 40u);
  if (have_command("dot")) {
    const auto svg = run_shell("dot -Tsvg " + shell_quote(path("g.dot")) + " -o " + shell_quote(path("g.svg")));
    EXPECT_EQ(svg.status, 0) << svg.err;
    EXPECT_NE(read_text(path("g.svg")).find("</svg>"), std::string::npos);
  }
}

TEST_F(ExportCli, BadInputExitsOneWritesNothingKeepsOldOutput) {
  write_text(path("bad.json"), "{\"format\": \"nimble-trace\", \"version\": 1, \"tasks\": [{\"id\": 0, \"kind\": "
                               "\"kernel\", \"deps\": [3]}]}");
  for (const char* format : {"perfetto", "dot"}) {
    const auto run = nimble(std::string("export --format ") + format + " " + shell_quote(path("bad.json")) + " -o " +
                            shell_quote(path("new.out")));
    EXPECT_EQ(run.status, 1) << format;
    EXPECT_NE(run.err.find("error"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("deps"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(path("new.out")));
  }
  write_text(path("old.json"), "keep me");
  write_text(path("syntax.json"), "{\"format\": ");
  const auto run = nimble("export --format perfetto " + shell_quote(path("syntax.json")) + " -o " +
                          shell_quote(path("old.json")));
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(read_text(path("old.json")), "keep me");
  const auto missing = nimble("export --format dot " + shell_quote(path("missing.json")) + " -o -");
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(missing.out.empty());
}

TEST_F(ExportCli, UnwritableOutputExitsOne) {
  const auto run = nimble("export --format dot " + example("tiny.json") + " -o " +
                          shell_quote(path("no/such/dir/g.dot")));
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("cannot write"), std::string::npos) << run.err;
}

TEST_F(ExportCli, UsageErrors) {
  EXPECT_NE(nimble("export --format svg " + example("tiny.json") + " -o -").status, 0);
  EXPECT_NE(nimble("export " + example("tiny.json") + " -o -").status, 0);   // --format is required
  EXPECT_NE(nimble("export --format dot " + example("tiny.json")).status, 0);  // -o is required
}

TEST_F(ExportCli, HelpExplainsFormatsAndViewers) {
  const auto run = nimble("export --help");
  EXPECT_EQ(run.status, 0);
  for (const char* needle : {"perfetto", "dot", "ui.perfetto.dev", "dot -Tsvg", "nimble export --format perfetto",
                             "--max-streams", "transitive reduction"}) {
    EXPECT_NE(run.out.find(needle), std::string::npos) << needle << "\n" << run.out;
  }
  EXPECT_NE(nimble("--help").out.find("export"), std::string::npos);
}

TEST_F(ExportCli, MaxStreamsAndReschedule) {
  const auto run = nimble("export --format perfetto " + example("inception_block.json") + " -o - --max-streams 2");
  ASSERT_EQ(run.status, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["otherData"]["plan"]["streams"], 2);
  EXPECT_EQ(doc["otherData"]["plan"]["source"], "computed");

  const auto stored = nimble("export --format perfetto " + example("tiny_scheduled.json") + " -o - --max-streams 1");
  ASSERT_EQ(stored.status, 0) << stored.err;
  EXPECT_NE(stored.err.find("--max-streams is ignored"), std::string::npos) << stored.err;
  EXPECT_EQ(json::parse(stored.out)["otherData"]["plan"]["streams"], 3);

  const auto again =
      nimble("export --format perfetto " + example("tiny_scheduled.json") + " -o - --max-streams 1 --reschedule");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(json::parse(again.out)["otherData"]["plan"]["streams"], 1);
}

// Two kernels whose only dependency is address reuse (allocation 1 freed, allocation 2 at the
// same address): one stream as recorded, two once memory is renamed as `nimble bench` does.
TEST_F(ExportCli, RenameMemoryDropsAddressReuseDependencies) {
  const std::string trace = path("reuse.json");
  write_text(trace, R"({"format": "nimble-trace", "version": 1,
    "allocations": [
      {"id": 1, "addr": "0x7f0000000000", "size": 1024, "kind": "async", "freed": true, "freed_before_task": 1},
      {"id": 2, "addr": "0x7f0000000000", "size": 1024, "kind": "async", "allocated_before_task": 1}],
    "tasks": [
      {"id": 0, "kind": "kernel", "deps": [], "duration_us": 10, "mem": [{"alloc": 1, "offset": 0, "size": 1024, "mode": "w"}]},
      {"id": 1, "kind": "kernel", "deps": [0], "duration_us": 10, "mem": [{"alloc": 2, "offset": 0, "size": 1024, "mode": "w"}],
       "dep_reasons": {"0": "memory WAW 0x7f0000000000..0x7f0000000400"}}]})");
  const auto recorded = nimble("export --format perfetto " + shell_quote(trace) + " -o -");
  ASSERT_EQ(recorded.status, 0) << recorded.err;
  EXPECT_EQ(json::parse(recorded.out)["otherData"]["plan"]["streams"], 1);

  const auto renamed = nimble("export --format perfetto --rename-memory " + shell_quote(trace) + " -o -");
  ASSERT_EQ(renamed.status, 0) << renamed.err;
  EXPECT_EQ(json::parse(renamed.out)["otherData"]["plan"]["streams"], 2);
  EXPECT_NE(renamed.err.find("memory renamed: 1 -> 0 dependencies"), std::string::npos) << renamed.err;

  const auto dot = nimble("export --format dot --rename-memory " + shell_quote(trace) + " -o -");
  ASSERT_EQ(dot.status, 0) << dot.err;
  EXPECT_EQ(dot.out.find("->"), std::string::npos) << "no edge left:\n" << dot.out;
}

}  // namespace
}  // namespace nimble::export_test

#endif  // NIMBLE_EXE
