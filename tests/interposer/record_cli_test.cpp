// `nimble record` end to end with the fake driver: environment, exit status, summary, advice.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace nimble::test {
namespace {

std::vector<std::string> fake_driver_env() {
  return {"NIMBLE_LIBCUDA=" + fake_driver_path(), "NIMBLE_CUPTI=0"};
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

TEST(RecordCommand, AutoRangeOption) {
  const std::string out = temp_dir() + "/trace.json";
  const RunResult r = run_with_env(fake_driver_env(), {NIMBLE_TEST_CLI, "record", "-o", out, "--capture-range", "auto",
                                                       "--", probe_path(), "auto"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("capture      auto"), std::string::npos) << r.output;
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

}  // namespace
}  // namespace nimble::test
