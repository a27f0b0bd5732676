// Runs `nimble` as a user would and checks exit status, output and written files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "settings/settings.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Result {
  int status = -1;
  std::string out;  // stdout and stderr together unless split
  std::string err;
};

// Runs nimble with `args` (shell-quoted by the caller); stdout and stderr captured separately.
Result nimble(const std::string& args) {
  const fs::path err_file = fs::temp_directory_path() / ("nimble_cli_err_" + std::to_string(getpid()));
  const std::string command = std::string(NIMBLE_EXE) + " " + args + " 2>" + err_file.string();
  Result run;
  FILE* pipe = popen(command.c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) run.out.append(buf, n);
  const int raw = pclose(pipe);
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(err_file);
  run.err.assign(std::istreambuf_iterator<char>(in), {});
  fs::remove(err_file);
  return run;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nimble_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  // A fork-join trace: 0 -> {1, 2} -> 3, with durations, as a user would write it.
  fs::path fork_join() {
    return write("fork_join.json", R"({"format": "nimble-trace", "version": 1, "tasks": [
      {"id": 0, "kind": "memcpy", "deps": [], "duration_us": 2},
      {"id": 1, "kind": "kernel", "deps": [0], "duration_us": 10, "name": "left"},
      {"id": 2, "kind": "kernel", "deps": [0], "duration_us": 10, "name": "right"},
      {"id": 3, "kind": "kernel", "deps": [1, 2], "duration_us": 3}]})");
  }

  fs::path dir_;
};

TEST_F(CliTest, HelpExplainsEverySubcommand) {
  const Result top = nimble("--help");
  EXPECT_EQ(top.status, 0);
  for (const char* sub : {"check", "show", "schedule", "demo"}) {
    EXPECT_NE(top.out.find(sub), std::string::npos) << sub;
    const Result help = nimble(std::string(sub) + " --help");
    EXPECT_EQ(help.status, 0) << sub;
    EXPECT_GT(help.out.size(), 200u) << sub << " help is too thin:\n" << help.out;
  }
}

// `nimble settings` shows every setting of the list with its default, what it accepts and its help.
TEST_F(CliTest, SettingsListsEveryVariableWithItsDefault) {
  const Result r = nimble("settings");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const nimble::settings::Setting& s : nimble::settings::all) {
    const std::string accepted = nimble::settings::accepted(s);
    std::string line = *s.default_text ? nimble::settings::assignment(s) : std::string(s.variable);
    if (!accepted.empty()) line += "  (" + accepted + ")";
    line += "\n";
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " in\n" << r.out;
    EXPECT_NE(r.out.find(s.help), std::string::npos) << s.variable;
  }
  EXPECT_NE(r.out.find("NIMBLE_RUN_TRIAL=4  (a positive integer, at most 1000, or 0 for no trial)\n"), std::string::npos)
      << r.out;
}

TEST_F(CliTest, NoSubcommandIsAUsageError) {
  const Result run = nimble("");
  EXPECT_NE(run.status, 0);
}

TEST_F(CliTest, CheckAcceptsAValidTrace) {
  const Result run = nimble("check " + fork_join().string());
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("ok, 4 tasks"), std::string::npos) << run.out;
}

TEST_F(CliTest, CheckListsEveryProblemWithTaskAndField) {
  const fs::path bad = write("bad.json", R"({"format": "nimble-trace", "version": 1, "tasks": [
      {"id": 0, "kind": "kernel", "deps": [5]},
      {"id": 1, "kind": "kernel", "deps": [0], "duration_us": -3},
      {"id": 1, "kind": "kernel", "deps": []}]})");
  const Result run = nimble("check " + bad.string());
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("task 0"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("deps"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("duration_us"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("already used"), std::string::npos) << run.err;
}

TEST_F(CliTest, CheckReportsSyntaxErrorLineAndColumn) {
  const fs::path bad = write("syntax.json", "{\"format\": \"nimble-trace\",\n  \"tasks\": [,]}");
  const Result run = nimble("check " + bad.string());
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("line 2"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("column"), std::string::npos) << run.err;
}

TEST_F(CliTest, CheckReportsAMissingFile) {
  const Result run = nimble("check " + (dir_ / "absent.json").string());
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("absent.json"), std::string::npos) << run.err;
}

TEST_F(CliTest, ScheduleWritesAValidScheduledTrace) {
  const fs::path out = dir_ / "scheduled.json";
  const Result run = nimble("schedule " + fork_join().string() + " -o " + out.string() + " --stats");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("critical path"), std::string::npos) << run.out;

  const json scheduled = json::parse(read_file(out));
  EXPECT_EQ(scheduled["schedule"]["algorithm"], "nimble");
  EXPECT_EQ(scheduled["schedule"]["streams"], 2);  // the two branches run concurrently
  EXPECT_EQ(scheduled["schedule"]["syncs"], 2);    // one fork wait, one join wait
  EXPECT_EQ(scheduled["tasks"][1]["name"], "left");  // unknown fields survive
  const auto& left = scheduled["tasks"][1]["schedule"];
  const auto& right = scheduled["tasks"][2]["schedule"];
  EXPECT_NE(left["stream"], right["stream"]);

  const Result check = nimble("check " + out.string());
  EXPECT_EQ(check.status, 0) << check.err;
  EXPECT_NE(check.out.find("schedule valid"), std::string::npos);
}

TEST_F(CliTest, ScheduleToStdoutKeepsStdoutPureJson) {
  const Result run = nimble("schedule " + fork_join().string() + " -o - --stats");
  ASSERT_EQ(run.status, 0) << run.err;
  const json scheduled = json::parse(run.out);  // throws if anything else went to stdout
  EXPECT_EQ(scheduled["tasks"].size(), 4u);
  EXPECT_NE(run.err.find("makespan"), std::string::npos);
}

TEST_F(CliTest, MaxStreamsLimitsStreams) {
  const fs::path sample = fs::path(NIMBLE_SOURCE_DIR) / "docs/examples/inception_block.json";
  const fs::path out = dir_ / "limited.json";
  const Result run = nimble("schedule " + sample.string() + " -o " + out.string() + " --max-streams 2");
  ASSERT_EQ(run.status, 0) << run.err;
  const json scheduled = json::parse(read_file(out));
  EXPECT_LE(scheduled["schedule"]["streams"].get<int>(), 2);
  for (const auto& task : scheduled["tasks"]) EXPECT_LT(task["schedule"]["stream"].get<int>(), 2);
  EXPECT_EQ(nimble("check " + out.string()).status, 0);
}

TEST_F(CliTest, RejectedInputLeavesExistingOutputUntouched) {
  const fs::path bad = write("cycle.json", R"({"format": "nimble-trace", "version": 1, "tasks": [
      {"id": 0, "kind": "kernel", "deps": [1]}, {"id": 1, "kind": "kernel", "deps": [0]}]})");
  const fs::path out = write("existing.json", "precious");
  const Result run = nimble("schedule " + bad.string() + " -o " + out.string());
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(read_file(out), "precious");
  EXPECT_NE(run.err.find("task 0"), std::string::npos) << run.err;
}

TEST_F(CliTest, ScheduleWithoutOutputSaysWhatToDo) {
  const Result run = nimble("schedule " + fork_join().string());
  EXPECT_NE(run.status, 0);
  EXPECT_NE((run.out + run.err).find("--output"), std::string::npos) << run.out << run.err;
}

TEST_F(CliTest, ShowSummarisesPlainAndScheduledTraces) {
  const Result plain = nimble("show " + fork_join().string());
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.out.find("kernel 3"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("critical path"), std::string::npos);
  EXPECT_NE(plain.out.find("15.0 us"), std::string::npos) << plain.out;  // 2 + 10 + 3
  EXPECT_NE(plain.out.find("25.0 us"), std::string::npos) << plain.out;  // serial sum

  const fs::path out = dir_ / "scheduled.json";
  ASSERT_EQ(nimble("schedule " + fork_join().string() + " -o " + out.string()).status, 0);
  const Result scheduled = nimble("show " + out.string());
  ASSERT_EQ(scheduled.status, 0) << scheduled.err;
  EXPECT_NE(scheduled.out.find("stored schedule"), std::string::npos) << scheduled.out;
}

// How the iteration was captured: `show` prints it, and says when the automatic range recorded a
// stretch that did not repeat the period it had found (XLA's autotuning did).
TEST_F(CliTest, ShowSaysHowTheIterationWasCapturedAndWarnsOfAStretchThatDidNotRepeat) {
  const auto with_capture = [&](const std::string& name, const std::string& capture) {
    return write(name, R"({"format": "nimble-trace", "version": 1, "capture": )" + capture +
                           R"(, "tasks": [{"id": 0, "kind": "kernel", "deps": [], "duration_us": 5}]})");
  };
  const Result diverged = nimble("show " + with_capture("diverged.json", R"({"range": "auto", "iteration": 1,
      "ended_by": "period complete", "truncated": false, "auto": {"period": 26, "matched_expected_period": false,
      "windows_dropped_for_not_repeating": 2}})").string());
  ASSERT_EQ(diverged.status, 0) << diverged.err;
  EXPECT_NE(diverged.out.find("captured                  auto, iteration 1, ended by period complete; period 26 tasks"),
            std::string::npos) << diverged.out;
  EXPECT_NE(diverged.out.find("did NOT repeat the period found"), std::string::npos) << diverged.out;
  EXPECT_NE(diverged.out.find("--iteration N"), std::string::npos) << diverged.out;
  EXPECT_NE(diverged.out.find("after 2 window(s) dropped"), std::string::npos) << diverged.out;

  const Result block = nimble("show " + with_capture("block.json", R"({"range": "auto", "iteration": 2,
      "ended_by": "period complete", "auto": {"period": 2529, "matched_expected_period": true,
      "one_block_of_sync_period": 25294}})").string());
  ASSERT_EQ(block.status, 0) << block.err;
  EXPECT_NE(block.out.find("one block of the 25294 tasks between two host syncs"), std::string::npos) << block.out;
  EXPECT_EQ(block.out.find("did NOT"), std::string::npos) << block.out;

  const Result none = nimble("show " + fork_join().string());
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out.find("captured"), std::string::npos) << none.out;
}

// A trace issued from several threads (JAX: one computes, a pool copies inputs in): `show` lists
// each thread's tasks and streams, in order of first appearance; one thread gives no such lines.
TEST_F(CliTest, ShowListsTheIssuingThreadsWhenThereAreSeveral) {
  const fs::path threads = write("threads.json", R"({"format": "nimble-trace", "version": 1, "tasks": [
      {"id": 0, "kind": "kernel", "deps": [], "stream": 0, "thread": 700},
      {"id": 1, "kind": "memcpy", "deps": [], "stream": 2, "thread": 701},
      {"id": 2, "kind": "host_func", "deps": [], "stream": 3, "thread": 701},
      {"id": 3, "kind": "kernel", "deps": [0, 1], "stream": 0, "thread": 700}]})");
  const Result run = nimble("show " + threads.string());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("issued by                 2 threads"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("thread 0                tid 700: kernel 2; streams 0"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("thread 1                tid 701: memcpy 1, host_func 1; streams 2, 3"), std::string::npos)
      << run.out;
  const Result one = nimble("show " + fork_join().string());
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out.find("issued by"), std::string::npos) << one.out;
}

TEST_F(CliTest, DemoPrintsThePlanOfTheBundledSample) {
  const Result run = nimble("demo");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("makespan, nimble streams"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("plan (task: stream, waits)"), std::string::npos);
}

// 30 kernels that all touch one 64 MiB allocation (a caching allocator's segment): `show` says
// why they are serialised and what to do; kernels with allocations of their own get no note.
std::string kernels_on(bool one_segment) {
  std::string allocations = R"({"id": 0, "addr": "0x7f0000000000", "size": 67108864, "kind": "device"})";
  std::string tasks;
  for (int i = 0; i < 30; ++i) {
    const int alloc = one_segment ? 0 : i + 1;
    if (!one_segment) {
      allocations += R"(, {"id": )" + std::to_string(alloc) + R"(, "addr": "0x7f10000)" + std::to_string(i + 10) +
                     R"(000", "size": 4096, "kind": "async"})";
    }
    tasks += std::string(i ? ", " : "") + R"({"id": )" + std::to_string(i) + R"(, "kind": "kernel", "deps": )" +
             (one_segment && i ? "[" + std::to_string(i - 1) + "]" : "[]") + R"(, "duration_us": 5, "mem": [{"alloc": )" +
             std::to_string(alloc) + R"(, "offset": 0, "size": 4096, "mode": "rw"}]})";
  }
  return R"({"format": "nimble-trace", "version": 1, "allocations": [)" + allocations + R"(], "tasks": [)" + tasks + "]}";
}

TEST_F(CliTest, ShowExplainsKernelsSerialisedByOneSharedAllocation) {
  const Result shared = nimble("show " + write("segment.json", kernels_on(true)).string());
  ASSERT_EQ(shared.status, 0) << shared.err;
  EXPECT_NE(shared.out.find("note: 30 of 30 kernels touch allocation 0 (64.0 MiB at 0x7f0000000000)"), std::string::npos)
      << shared.out;
  EXPECT_NE(shared.out.find("PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync"), std::string::npos) << shared.out;

  const Result separate = nimble("show " + write("separate.json", kernels_on(false)).string());
  ASSERT_EQ(separate.status, 0) << separate.err;
  EXPECT_EQ(separate.out.find("note:"), std::string::npos) << separate.out;
}

}  // namespace
