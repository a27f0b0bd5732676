// The framework-free speedup experiment (`nimble bench`): inside the recorded process, replay the
// recorded iteration with every backend, time it, check that every backend leaves the same bytes
// in the memory the iteration writes, and put the program's memory back as it was.
#pragma once

#include <string>
#include <vector>

#include "nimble/replayer/bench_report.hpp"
#include "nimble/replayer/driver_api.hpp"
#include "nimble/replayer/plan.hpp"

namespace nimble::replayer {

struct BenchOptions {
  int iterations = 100;   // timed replays per backend
  int warmup = 10;
  bool verify = true;     // compare the memory each backend leaves with eager replay's
  int reference_runs = 3; // eager replays whose disagreement marks ranges nondeterministic
  void (*progress)(const std::string&) = nullptr;  // told each step (NIMBLE_DEBUG)
};

// What a plan that `nimble run` could replay holds that the experiment cannot, one line per op,
// each naming it: collectives (replayed alone, one rank's would wait for peers that are not
// replaying, with a work descriptor NCCL has since reused).
std::vector<std::string> bench_refusals(const ReplayPlan& plan);

// Runs the experiment on the current context. Never throws; problems land in `error`s.
BenchResult run_bench(const DriverApi& api, const ReplayPlan& plan, const BenchOptions& options);

}  // namespace nimble::replayer
