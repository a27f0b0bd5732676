#include "run_mode.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>

#include "config.hpp"
#include "nimble/replayer/run_executor.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/io.hpp"
#include "output.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

// Created once and never destroyed: wrappers may run during exit.
struct RunState {
  std::mutex mu;
  replayer::DriverApi api;
  replayer::ReplayPlan plan;
  std::vector<replayer::Segment> segments;
  std::unique_ptr<replayer::GraphExecutor> executor;
  std::unique_ptr<replayer::ShortCircuit> short_circuit;
  std::uint64_t stream = 0;  // the stream the current iteration is issued on (map_stream)
  std::string summary_path;
  trace::json setup;         // what was built, for the summary file
};
RunState* g_run = nullptr;

void say(const std::string& text) {
  const std::string line = "nimble run: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Whether the program could not run replay here: returns the reason, or "" when it can.
std::string why_not(const trace::Trace& trace, const replayer::PlanResult& planned) {
  if (!planned.plan) {
    return "the recorded iteration cannot be replayed safely (" + std::to_string(planned.problems.size()) +
           " problem(s)); first: " + planned.problems.front();
  }
  if (!planned.plan->shadow_sizes.empty()) {
    return "the program freed " + std::to_string(planned.plan->shadow_sizes.size()) +
           " allocation(s) inside the recorded iteration (an allocator without a cache, such as "
           "PYTORCH_NO_CUDA_MEMORY_CACHING=1); replay needs the recorded addresses to stay the program's";
  }
  std::set<int> streams;
  for (const trace::Task& t : trace.tasks) {
    if ((t.kind == "kernel" || t.kind == "memcpy" || t.kind == "memset") && t.stream) streams.insert(*t.stream);
  }
  if (streams.size() > 1) {
    return "the iteration used " + std::to_string(streams.size()) + " streams; nimble run replays programs that issue "
           "their iteration on one stream";
  }
  return "";
}

trace::json graph_stats(const replayer::GraphExecutor::Stats& s) {
  auto mean_us = [](std::uint64_t ns, std::size_t n) { return n ? static_cast<double>(ns) / 1e3 / static_cast<double>(n) : 0.0; };
  return {{"execs", s.execs},
          {"launches", s.launches},
          {"launch_us_mean", mean_us(s.launch_ns, s.launches)},
          {"node_updates", s.node_updates},
          {"node_update_us_mean", mean_us(s.update_ns, s.node_updates)}};
}

void write_summary() {
  RunState& r = *g_run;
  const replayer::ShortCircuitSummary& s = r.short_circuit->summary();
  trace::json fallbacks = trace::json::array();
  for (const auto& [reason, count] : s.fallbacks) fallbacks.push_back({{"reason", reason}, {"count", count}});
  std::size_t replayed = s.iterations_replayed;
  trace::json summary = {{"format", "nimble-run"},
                         {"version", 1},
                         {"trace", trace_output_path()},
                         {"setup", r.setup},
                         {"iterations_replayed", replayed},
                         {"segments_launched", s.segments_launched},
                         {"calls_deferred", s.calls_deferred},
                         {"host_copies_run_in_place", s.host_copies},
                         {"false_starts", s.false_starts},
                         {"graphs", graph_stats(r.executor->stats())},
                         {"fallbacks", fallbacks}};
  if (auto error = trace::write_file_atomically(r.summary_path, trace::pretty_json(summary) + "\n")) {
    say("could not write " + r.summary_path + ": " + *error);
  }
}

void at_exit() {
  if (!g_run) return;
  try {
    std::lock_guard<std::mutex> lock(g_run->mu);
    InternalScope internal;
    g_running.store(false, std::memory_order_relaxed);
    try {
      g_run->short_circuit->finish("the program ended in the middle of a recorded iteration");
    } catch (const std::exception& e) {
      say(std::string("at exit: ") + e.what());
    }
    const std::string text = g_run->short_circuit->summary_text();
    std::fwrite(text.data(), 1, text.size(), stderr);
    write_summary();
  } catch (...) {
    // Never let an exit-time problem reach the program.
  }
}

// Device, managed or pinned host memory: anything a kernel could dereference.
bool cuda_knows_address(std::uint64_t value) {
  if (value == 0 || !g_run) return false;
  unsigned int type = 0;
  return g_run->api.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, value) == CUDA_SUCCESS;
}

}  // namespace

void start_short_circuit(trace::Trace trace) {
  InternalScope internal;
  auto run = std::make_unique<RunState>();
  try {
    scheduler::Options options;
    options.max_streams = static_cast<std::uint32_t>(config().run_max_streams);
    scheduler::schedule_trace(trace, options);
    replayer::PlanResult planned = replayer::build_plan(trace);
    if (const std::string reason = why_not(trace, planned); !reason.empty()) {
      say("not replaying: " + reason + ". The program runs as it is.");
      return;
    }
    std::string missing;
    if (!replayer::load_driver_api(&driver_function, run->api, &missing)) {
      say("not replaying: the driver lacks " + missing + ". The program runs as it is.");
      return;
    }
    run->plan = std::move(*planned.plan);
    run->segments = replayer::segments_of(run->plan, static_cast<std::size_t>(config().run_piece));
    const auto backend = run->plan.streams > 1 ? replayer::Backend::StreamGraph : replayer::Backend::Graph;
    run->executor = std::make_unique<replayer::GraphExecutor>(run->api, run->plan, run->segments, backend,
                                                              static_cast<std::size_t>(config().run_variants));
    // One stream keeps the program's order: any argument may change. A schedule over several
    // streams was built from the recorded addresses: they must stay.
    const auto rule = run->plan.streams > 1 ? replayer::ArgumentRule::SameAddresses : replayer::ArgumentRule::AnyBytes;
    run->short_circuit =
        std::make_unique<replayer::ShortCircuit>(run->plan, run->segments, &cuda_knows_address, *run->executor, rule);
    run->summary_path = run_output_path(config(), trace_output_path());
    run->setup = {{"ops", run->plan.ops.size()},
                  {"segments", run->segments.size()},
                  {"graphs", run->executor->graphs()},
                  {"streams", run->plan.streams},
                  {"arguments", rule == replayer::ArgumentRule::AnyBytes ? "any bytes may change" : "same device addresses"},
                  {"piece", config().run_piece},
                  {"variants", config().run_variants}};
  } catch (const std::exception& e) {
    say(std::string("not replaying: ") + e.what() + ". The program runs as it is.");
    return;
  }
  say("replaying: " + std::to_string(run->plan.ops.size()) + " recorded ops in " + std::to_string(run->executor->graphs()) +
      " graph(s) of up to " + std::to_string(run->plan.streams) + " stream(s); later iterations that match the "
      "recording are launched as graphs (summary at exit, " + run->summary_path + ")");
  g_run = run.release();
  std::atexit(at_exit);
  g_running.store(true, std::memory_order_relaxed);
}

bool short_circuit_takes(CUstream stream, StreamVariant variant, replayer::GpuCall* call) {
  if (!g_run) return false;
  std::lock_guard<std::mutex> lock(g_run->mu);
  if (!running()) return false;
  InternalScope internal;
  replayer::ShortCircuit& sc = *g_run->short_circuit;
  try {
    if (!call) {
      sc.on_host_visible_point("issued a task nimble run does not replay");
      return false;
    }
    const std::uint64_t handle = map_stream(stream, variant);
    if (sc.awaiting_iteration()) {
      // Whatever arms now is issued on this stream: graphs go there.
      g_run->stream = handle;
      g_run->executor->set_stream(reinterpret_cast<CUstream>(handle));
    } else if (handle != g_run->stream) {
      sc.on_host_visible_point("issued work on another stream");
      return false;
    }
    return sc.on_call(std::move(*call)) == replayer::Action::Deferred;
  } catch (const std::exception& e) {
    // Issuing deferred calls failed: the driver is in trouble; say so loudly and stop.
    g_running.store(false, std::memory_order_relaxed);
    log_message(std::string("nimble run: replay failed and was stopped: ") + e.what());
    return false;
  }
}

void short_circuit_host_visible(const char* what) {
  if (!g_run) return;
  std::lock_guard<std::mutex> lock(g_run->mu);
  if (!running()) return;
  InternalScope internal;
  try {
    g_run->short_circuit->on_host_visible_point(what);
  } catch (const std::exception& e) {
    g_running.store(false, std::memory_order_relaxed);
    log_message(std::string("nimble run: replay failed and was stopped: ") + e.what());
  }
}

}  // namespace nimble::hooks
