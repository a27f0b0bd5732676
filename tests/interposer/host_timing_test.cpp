// NIMBLE_HOST_TIMES=1: the table printed at exit counts every intercepted call, in any mode.
#include <gtest/gtest.h>

#include <regex>

#include "test_support.hpp"

namespace nimble::test {
namespace {

// The calls column of `function`'s row, or -1 when the table has no such row.
long calls_of(const std::string& output, const std::string& function) {
  const std::regex row("\n  " + function + " +([0-9]+) +[0-9.]+ +[0-9.]+ +[0-9.]+\n");
  std::smatch m;
  return std::regex_search(output, m, row) ? std::stol(m[1]) : -1;
}

TEST(HostTimes, IdleProgramGetsACountedTableAtExit) {
  const RunResult r = run_with_env({"LD_PRELOAD=" + preload_path(), "NIMBLE_LIBCUDA=" + fake_driver_path(),
                                    "NIMBLE_HOST_TIMES=1"},
                                   {probe_path(), "loop"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("nimble: host time inside intercepted calls"), std::string::npos) << r.output;
  // The probe loop: 8 iterations of two launches, a memset, two copies and a sync.
  EXPECT_EQ(calls_of(r.output, "cuLaunchKernel"), 16) << r.output;
  EXPECT_EQ(calls_of(r.output, "cuMemsetD32Async"), 8) << r.output;
  EXPECT_EQ(calls_of(r.output, "cuStreamSynchronize"), 8) << r.output;
  EXPECT_EQ(calls_of(r.output, "cudnnBackendExecute"), -1) << "no library call was made";
}

TEST(HostTimes, OffByDefault) {
  const RunResult r = run_with_env({"LD_PRELOAD=" + preload_path(), "NIMBLE_LIBCUDA=" + fake_driver_path()},
                                   {probe_path(), "loop"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("host time inside"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace nimble::test
