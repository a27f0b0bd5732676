// NIMBLE_HOST_TIMES=1: the table printed at exit counts every intercepted call, in any mode.
#include <gtest/gtest.h>

#include <regex>

#include "test_support.hpp"

namespace nimble::test {
namespace {

// Column `column` (1: calls, 2: total ms) of `function`'s row, or "-1" when the table has none.
std::string field_of(const std::string& output, const std::string& function, int column) {
  const std::regex row("\n  " + function + " +([0-9]+) +([0-9.]+) +[0-9.]+ +[0-9.]+\n");
  std::smatch m;
  return std::regex_search(output, m, row) ? m[column].str() : "-1";
}
long calls_of(const std::string& output, const std::string& function) { return std::stol(field_of(output, function, 1)); }
double total_ms_of(const std::string& output, const std::string& function) {
  return std::stod(field_of(output, function, 2));
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

// The inside_ns line the probe prints (libnimble.so's nimble_host_ns_inside()), or -2 when absent.
long long inside_ns(const std::string& output) {
  const std::regex line("\ninside_ns=(-?[0-9]+)\n");
  std::smatch m;
  return std::regex_search(output, m, line) ? std::stoll(m[1]) : -2;
}

// Programs that time their own steps read the host time spent inside nimble's wrappers; a driver
// call made inside a library call counts once (the table counts it in both rows). Each launch
// spends at least 2 ms; the convolution's 40 launches are inside its 40 cudnnBackendExecute calls.
TEST(HostTimes, InsideTimeCountsNestedCallsOnce) {
  const RunResult r = run_with_env({"LD_PRELOAD=" + preload_path(), "NIMBLE_LIBCUDA=" + fake_driver_path(),
                                    "NIMBLE_HOST_TIMES=1", "FAKE_DRIVER_LAUNCH_US=2000"},
                                   {probe_path(), "library"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(calls_of(r.output, "cuLaunchKernel"), 80) << "the fill kernel and the convolution's launch, 40 iterations\n"
                                                      << r.output;
  ASSERT_EQ(calls_of(r.output, "cudnnBackendExecute"), 40) << r.output;
  const double inside_ms = static_cast<double>(inside_ns(r.output)) / 1e6;
  const double rows_ms = total_ms_of(r.output, "cuLaunchKernel") + total_ms_of(r.output, "cudnnBackendExecute");
  EXPECT_GE(inside_ms, 80 * 2.0) << r.output;
  EXPECT_LT(inside_ms, rows_ms - 40 * 2.0 + 1.0) << "the convolution's launches counted twice?\n" << r.output;
}

TEST(HostTimes, InsideTimeIsZeroWhenNotTimed) {
  const RunResult r = run_with_env({"LD_PRELOAD=" + preload_path(), "NIMBLE_LIBCUDA=" + fake_driver_path()},
                                   {probe_path(), "loop"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(inside_ns(r.output), 0) << r.output;
}

TEST(HostTimes, OffByDefault) {
  const RunResult r = run_with_env({"LD_PRELOAD=" + preload_path(), "NIMBLE_LIBCUDA=" + fake_driver_path()},
                                   {probe_path(), "loop"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("host time inside"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace nimble::test
