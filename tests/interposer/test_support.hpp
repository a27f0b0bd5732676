// Helpers for the interposer's CPU tests: run a program with extra environment variables and
// capture what it printed, and find the built artefacts.
#pragma once

#include <string>
#include <vector>

namespace nimble::test {

struct RunResult {
  int exit_code = -1;   // 128+signal if killed by a signal
  std::string output;   // stdout and stderr together
};

RunResult run_with_env(const std::vector<std::string>& env, const std::vector<std::string>& argv);

std::string preload_path();      // build/lib/libnimble.so
std::string fake_driver_path();  // the fake libcuda (fake_driver.cpp)
std::string probe_path();        // probe_app
std::string temp_dir();          // a fresh directory for this test

// Environment that records the probe with the fake driver into `output`.
std::vector<std::string> record_env(const std::string& output, const std::string& range = "");

}  // namespace nimble::test
