#include "bench_hook.hpp"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "config.hpp"
#include "nimble/replayer/bench.hpp"
#include "nimble/replayer/renaming.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/io.hpp"
#include "output.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

using trace::json;

void print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stderr); }

// A crash inside the replay should say where it happened (addresses in libnimble.so; resolve
// them with addr2line -e libnimble.so), then die as it would have.
void on_crash(int sig) {
  static const char message[] = "nimble: bench crashed; backtrace:\n";
  (void)!write(2, message, sizeof message - 1);
  void* frames[48];
  backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Runs everything that can fail; returns the results document.
json run(trace::Trace& trace, std::optional<double> framework_ms) {
  json schedule = nullptr;
  replayer::BenchResult result;
  json problems = json::array();
  json renaming = nullptr;
  json shadows = nullptr;
  try {
    // Replay gives freed allocations their own memory: drop conflicts that were address reuse.
    const replayer::RenameStats renamed = replayer::rename_memory(trace);
    renaming = {{"edges_recorded", renamed.edges_before}, {"edges_after_renaming", renamed.edges_after}};
    scheduler::Options options;
    options.max_streams = static_cast<std::uint32_t>(config().bench_max_streams);
    const scheduler::Stats stats = scheduler::schedule_trace(trace, options);
    // The shape of the graph that is replayed (after renaming): how much concurrency there is.
    schedule = {{"algorithm", trace.schedule->algorithm},
                {"max_streams", options.max_streams ? json(options.max_streams) : json(nullptr)},
                {"streams", trace.schedule->streams},
                {"syncs", trace.schedule->syncs},
                {"edges", stats.edges},
                {"reduced_edges", stats.meg_edges},
                {"width_lower_bound", stats.width_lower_bound},
                {"width_upper_bound", stats.width_upper_bound},
                {"simulated_makespan_us", stats.makespan_us}};
  } catch (const std::exception& e) {
    result.error = std::string("the trace could not be scheduled: ") + e.what();
  }
  if (result.error.empty()) {
    const replayer::PlanResult planned = replayer::build_plan(trace);
    for (const std::string& p : planned.problems) problems.push_back(p);
    const std::vector<std::string> refusals = planned.plan ? replayer::bench_refusals(*planned.plan) : std::vector<std::string>{};
    for (const std::string& p : refusals) problems.push_back(p);
    replayer::DriverApi api;
    std::string missing;
    if (planned.plan) {
      std::uint64_t separate = 0;
      for (std::uint64_t size : planned.plan->shadow_sizes) separate += size;
      shadows = {{"count", planned.plan->shadow_sizes.size()}, {"bytes", planned.plan->shadow_bytes},
                 {"bytes_without_sharing", separate}, {"reused", planned.plan->shadows_reused}};
    }
    if (!planned.plan) {
      result.error = "the recorded iteration cannot be replayed safely (" + std::to_string(problems.size()) +
                     " problem(s), listed under \"problems\"); first: " + planned.problems.front();
    } else if (!refusals.empty()) {
      result.error = "the recorded iteration holds " + std::to_string(refusals.size()) + " collective(s) (listed under "
                     "\"problems\"); first: " + refusals.front();
    } else if (!replayer::load_driver_api(&driver_function, api, &missing)) {
      result.error = "the driver lacks " + missing;
    } else {
      replayer::BenchOptions options;
      options.iterations = config().bench_iterations;
      options.progress = [](const std::string& what) { debug_message("bench: " + what); };
      print("nimble: bench: replaying the recorded iteration " + std::to_string(options.iterations) +
            " times with each backend...\n");
      result = replayer::run_bench(api, *planned.plan, options);
    }
  }
  json bench = {{"format", "nimble-bench"}, {"version", 1}};
  json body = replayer::bench_to_json(result, replayer::trace_bounds(trace), framework_ms, schedule);
  bench["trace"] = trace_output_path();
  bench["tasks"] = trace.tasks.size();
  bench["iterations"] = config().bench_iterations;
  bench["device"] = trace.extra.value("device", json(nullptr));
  for (auto& [key, value] : body.items()) bench[key] = value;
  bench["renaming"] = renaming;
  bench["shadows"] = shadows;
  if (!problems.empty()) bench["problems"] = problems;
  return bench;
}

}  // namespace

void bench_recorded_iteration(trace::Trace trace, std::optional<double> framework_ms) {
  InternalScope internal;
  struct sigaction crash {}, old_segv {}, old_bus {};
  crash.sa_handler = on_crash;
  sigaction(SIGSEGV, &crash, &old_segv);
  sigaction(SIGBUS, &crash, &old_bus);
  try {
    const json bench = run(trace, framework_ms);
    const std::string path = bench_output_path(config(), trace_output_path());
    if (auto error = trace::write_file_atomically(path, trace::pretty_json(bench) + "\n")) {
      print("nimble: bench: could not write " + path + ": " + *error + "\n");
    }
    print("nimble: bench results (" + path + "):\n" + replayer::bench_table(bench));
  } catch (const std::exception& e) {
    print(std::string("nimble: bench failed: ") + e.what() + "\n");
  }
  sigaction(SIGSEGV, &old_segv, nullptr);
  sigaction(SIGBUS, &old_bus, nullptr);
}

}  // namespace nimble::hooks
