#include "run_mode.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "config.hpp"
#include "library_queries.hpp"
#include "nimble/replayer/comparison.hpp"
#include "nimble/replayer/library_memo.hpp"
#include "nimble/replayer/run_executor.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/io.hpp"
#include "output.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"
#include "signature.hpp"

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
  std::unique_ptr<replayer::LibraryMemo> memo;  // which library calls are skipped
  std::uint64_t stream = 0;  // the stream the current iteration is issued on (map_stream)
  std::string summary_path;
  trace::json setup;         // what was built, for the summary file

  // --compare: the phases, and what finds iteration starts in a plain block: the recorded
  // iteration's first call (its kind, and its signature for a kernel) after exactly as many calls
  // as the recording has.
  std::unique_ptr<replayer::Comparison> comparison;
  const char* first_kind = "";
  std::optional<std::uint64_t> first_signature;
  std::size_t iteration_calls = 0;   // kernels, copies and memsets of the recorded iteration
  std::size_t plain_calls = 0;       // calls since the last iteration start in a plain block
  std::optional<bool> plain_previous_whole;  // for the replayed iteration that ends a plain block

  struct HeldFree {
    FreeAsyncFn real;
    CUdeviceptr ptr;
    CUstream stream;
  };
  std::vector<HeldFree> held_frees;  // stream-ordered frees waiting for the held-back calls
  std::size_t frees_held = 0;        // how many were held, for the summary
};
RunState* g_run = nullptr;

void say(const std::string& text) {
  const std::string line = "nimble run: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Issuing or launching failed: the driver is in trouble; say so loudly and replay no more.
void stop_replay(const std::exception& e) {
  g_running.store(false, std::memory_order_relaxed);
  log_message(std::string("nimble run: replay failed and was stopped: ") + e.what());
}

double mean_us(std::uint64_t ns, std::size_t n) { return n ? static_cast<double>(ns) / 1e3 / static_cast<double>(n) : 0.0; }

// Whether the program could not run replay here: returns the reason, or "" when it can.
std::string why_not(const trace::Trace& trace, const replayer::PlanResult& planned) {
  if (!planned.plan) {
    return "the recorded iteration cannot be replayed safely (" + std::to_string(planned.problems.size()) +
           " problem(s)); first: " + planned.problems.front();
  }
  if (!planned.plan->shadow_sizes.empty()) {
    // Stream-ordered frees can wait until the work before them is launched (held_frees); a
    // synchronous cuMemFree inside the iteration synchronises, and a schedule over several
    // streams needs the recorded addresses.
    std::size_t synchronous = 0;
    if (auto list = trace.extra.find("allocations"); list != trace.extra.end() && list->is_array()) {
      for (const trace::json& a : *list) {
        if (a.value("freed", false) && a.value("kind", std::string()) != "async") ++synchronous;
      }
    }
    if (synchronous > 0) {
      return "the program freed " + std::to_string(synchronous) + " allocation(s) inside the recorded iteration with "
             "cuMemFree, which synchronises (an allocator without a cache, such as PYTORCH_NO_CUDA_MEMORY_CACHING=1; "
             "stream-ordered allocators such as PyTorch's backend:cudaMallocAsync are replayed)";
    }
    if (config().run_max_streams > 1) {
      return "the program freed " + std::to_string(planned.plan->shadow_sizes.size()) + " allocation(s) inside the "
             "recorded iteration; graphs over several streams (--max-streams > 1) need the recorded addresses to stay";
    }
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

trace::json graph_stats(const replayer::GraphExecutor& executor, const replayer::ReplayPlan& plan) {
  const replayer::GraphExecutor::Stats& s = executor.stats();
  // The ops whose parameters were written most: what changes between iterations.
  std::vector<std::size_t> order(plan.ops.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto& updates = executor.updates_per_op();
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return updates[a] > updates[b]; });
  trace::json most = trace::json::array();
  for (std::size_t k = 0; k < order.size() && k < 8 && updates[order[k]] > 0; ++k) {
    most.push_back({{"op", replayer::describe_op(plan.ops[order[k]])}, {"updates", updates[order[k]]}});
  }
  return {{"most_updated", most},
          {"execs", s.execs},
          {"launches", s.launches},
          {"launch_us_mean", mean_us(s.launch_ns, s.launches)},
          {"node_updates", s.node_updates},
          {"node_update_us_mean", mean_us(s.update_ns, s.node_updates)}};
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Once no call is held back any more, the frees that waited for them go out, in order.
void release_frees(RunState& r) {
  if (r.held_frees.empty() || r.short_circuit->holding()) return;
  std::vector<RunState::HeldFree> frees;
  frees.swap(r.held_frees);
  for (const RunState::HeldFree& f : frees) {
    if (const CUresult result = f.real(f.ptr, f.stream); result != CUDA_SUCCESS) {
      log_message("nimble run: a held-back cuMemFreeAsync failed with error " + std::to_string(result));
    }
  }
}

trace::json phase_json(const replayer::PhaseTimes& t) {
  return {{"iterations", t.iterations}, {"median_ms", t.median_ms}, {"p10_ms", t.p10_ms}, {"p90_ms", t.p90_ms}};
}

trace::json comparison_json(const replayer::Comparison& c) {
  const replayer::PhaseTimes replayed = c.times(replayer::Phase::Replay), plain = c.times(replayer::Phase::Plain);
  trace::json j = {{"block", c.block()}, {"replayed", phase_json(replayed)}, {"plain", phase_json(plain)}};
  j["speedup"] = replayed.median_ms > 0 && plain.median_ms > 0 ? trace::json(plain.median_ms / replayed.median_ms)
                                                               : trace::json(nullptr);
  return j;
}

std::string comparison_text(const replayer::Comparison& c) {
  const replayer::PhaseTimes replayed = c.times(replayer::Phase::Replay), plain = c.times(replayer::Phase::Plain);
  char line[400];
  if (replayed.iterations == 0 || plain.iterations == 0) {
    std::snprintf(line, sizeof line,
                  "nimble run: compare: too few whole iterations to compare (%zu replayed, %zu plain timed); "
                  "run more iterations or a smaller --compare block\n",
                  replayed.iterations, plain.iterations);
    return line;
  }
  std::snprintf(line, sizeof line,
                "nimble run: compare (this process, alternating blocks of %zu iterations): median iteration "
                "%.3f ms plain, %.3f ms replayed: %.2fx (p10-p90 %.3f-%.3f and %.3f-%.3f ms; %zu and %zu iterations)\n",
                c.block(), plain.median_ms, replayed.median_ms, plain.median_ms / replayed.median_ms, plain.p10_ms,
                plain.p90_ms, replayed.p10_ms, replayed.p90_ms, plain.iterations, replayed.iterations);
  return line;
}

trace::json library_json(const replayer::LibraryMemo& memo) {
  trace::json calls = trace::json::object();
  for (const auto& [symbol, s] : memo.stats()) {
    const double run_us = mean_us(s.run_ns, s.runs_timed);
    calls[symbol] = {{"calls", s.calls}, {"skipped", s.skipped}, {"run_us_mean", run_us},
                     {"saved_ms_estimate", run_us * static_cast<double>(s.skipped) / 1e3}};
  }
  const QueryStats q = query_stats();
  return {{"calls", calls},
          {"never_skipped", memo.disabled()},
          {"heuristics_answered_from_memory", q.answered},
          {"heuristics_asked", q.asked},
          {"heuristics_unstable", q.unstable}};
}

std::string library_text(const replayer::LibraryMemo& memo) {
  std::string text;
  char line[300];
  for (const auto& [symbol, s] : memo.stats()) {
    const double run_us = mean_us(s.run_ns, s.runs_timed);
    std::snprintf(line, sizeof line, "nimble run: %s: %zu of %zu calls skipped (%.1f us each when run: about %.1f ms saved)\n",
                  symbol.c_str(), s.skipped, s.calls, run_us, run_us * static_cast<double>(s.skipped) / 1e3);
    text += line;
  }
  for (const std::string& why : memo.disabled()) text += "nimble run: never skipped again: " + why + "\n";
  const QueryStats q = query_stats();
  if (q.answered || q.asked) {
    std::snprintf(line, sizeof line, "nimble run: cuBLASLt heuristics: %zu answered from memory, %zu asked%s\n", q.answered,
                  q.asked, q.unstable ? " (some inputs gave changing answers: always asked)" : "");
    text += line;
  }
  return text;
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
                         {"frees_held_back", r.frees_held},
                         {"graphs", graph_stats(*r.executor, r.plan)},
                         {"fallbacks", fallbacks}};
  if (r.comparison) summary["compare"] = comparison_json(*r.comparison);
  if (r.memo) summary["library"] = library_json(*r.memo);
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
      release_frees(*g_run);
    } catch (const std::exception& e) {
      say(std::string("at exit: ") + e.what());
    }
    g_plain_phase.store(false, std::memory_order_relaxed);
    std::string text = g_run->short_circuit->summary_text();
    if (g_run->memo) text += library_text(*g_run->memo);
    if (g_run->comparison) text += comparison_text(*g_run->comparison);
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

// --compare: once the block's last replayed iteration has matched whole, the next iterations are
// the program's own.
void end_replayed_block_if_done(RunState& r, replayer::Comparison& c) {
  replayer::ShortCircuit& sc = *r.short_circuit;
  if (c.block_done() && sc.armed() && sc.awaiting_iteration()) {
    c.switch_phase();
    r.plain_calls = r.iteration_calls;  // the next call, if it is the first, begins an iteration
    g_plain_phase.store(true, std::memory_order_relaxed);
  }
}

// --compare, after a call went to the short-circuit: did it begin an iteration; did it end a block?
void note_replayed_call(RunState& r, replayer::Comparison& c, std::size_t started_before, bool previous_whole) {
  replayer::ShortCircuit& sc = *r.short_circuit;
  if (sc.iterations_started() > started_before) {
    c.iteration_began(now_ns(), r.plain_previous_whole.value_or(previous_whole));
    r.plain_previous_whole.reset();
  }
  end_replayed_block_if_done(r, c);
}

}  // namespace

bool short_circuit_passes(const char* kind, std::uint64_t signature) {
  if (!g_run) return false;
  std::lock_guard<std::mutex> lock(g_run->mu);
  RunState& r = *g_run;
  replayer::Comparison* c = r.comparison.get();
  if (!running() || !c || c->phase() != replayer::Phase::Plain) return false;
  ++r.plain_calls;
  if (r.plain_calls <= r.iteration_calls) return true;
  const bool first = std::strcmp(kind, r.first_kind) == 0 && (!r.first_signature || *r.first_signature == signature);
  if (!first) {
    // Never found the recorded iteration's start again: leave it to the short-circuit.
    if (r.plain_calls <= 4 * r.iteration_calls) return true;
    c->switch_phase();
    g_plain_phase.store(false, std::memory_order_relaxed);
    return false;
  }
  const bool previous_whole = r.plain_calls == r.iteration_calls + 1;
  r.plain_calls = 1;
  if (c->block_done()) {  // this iteration is replayed: the short-circuit arms on this call
    c->switch_phase();
    r.plain_previous_whole = previous_whole;
    g_plain_phase.store(false, std::memory_order_relaxed);
    return false;
  }
  c->iteration_began(now_ns(), previous_whole);
  return true;
}

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
    run->plan = replayer::with_program_pointers(std::move(*planned.plan));
    run->segments = replayer::segments_of(run->plan, static_cast<std::size_t>(config().run_piece));
    const auto backend = run->plan.streams > 1 ? replayer::Backend::StreamGraph : replayer::Backend::Graph;
    run->executor = std::make_unique<replayer::GraphExecutor>(run->api, run->plan, run->segments, backend,
                                                              static_cast<std::size_t>(config().run_variants));
    // One stream keeps the program's order: any argument may change. A schedule over several
    // streams was built from the recorded addresses: they must stay.
    const auto rule = run->plan.streams > 1 ? replayer::ArgumentRule::SameAddresses : replayer::ArgumentRule::AnyBytes;
    run->short_circuit =
        std::make_unique<replayer::ShortCircuit>(run->plan, run->segments, &cuda_knows_address, *run->executor, rule);
    if (config().run_skip_library) run->memo = std::make_unique<replayer::LibraryMemo>(run->plan);
    run->summary_path = run_output_path(config(), trace_output_path());
    run->setup = {{"ops", run->plan.ops.size()},
                  {"segments", run->segments.size()},
                  {"graphs", run->executor->graphs()},
                  {"streams", run->plan.streams},
                  {"arguments", rule == replayer::ArgumentRule::AnyBytes ? "any bytes may change" : "same device addresses"},
                  {"piece", config().run_piece},
                  {"variants", config().run_variants}};
    if (config().run_compare > 0) {
      run->comparison = std::make_unique<replayer::Comparison>(static_cast<std::size_t>(config().run_compare));
      for (const replayer::Op& op : run->plan.ops) {
        if (op.kind == replayer::OpKind::Nop) continue;
        if (run->iteration_calls++ > 0) continue;
        run->first_kind = op.kind == replayer::OpKind::Kernel ? "kernel" : op.kind == replayer::OpKind::Copy ? "memcpy" : "memset";
        if (op.kind == replayer::OpKind::Kernel) {
          run->first_signature = kernel_signature(op.kernel.function, op.kernel.grid, op.kernel.block);
        }
      }
    }
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
    const bool previous_whole = sc.armed() && sc.awaiting_iteration();
    const std::size_t started = sc.iterations_started();
    const bool deferred = sc.on_call(std::move(*call)) == replayer::Action::Deferred;
    if (replayer::Comparison* c = g_run->comparison.get()) note_replayed_call(*g_run, *c, started, previous_whole);
    release_frees(*g_run);
    return deferred;
  } catch (const std::exception& e) {
    stop_replay(e);
    release_frees(*g_run);
    return false;
  }
}

LibraryTurn library_call_begins(const char* symbol, std::uint64_t key) {
  LibraryTurn turn;
  if (!g_run) return turn;
  std::lock_guard<std::mutex> lock(g_run->mu);
  RunState& r = *g_run;
  if (!running() || !r.memo) return turn;
  replayer::ShortCircuit& sc = *r.short_circuit;
  if (!sc.armed() || sc.awaiting_iteration()) return turn;  // only inside a recorded iteration
  const std::optional<std::size_t> site = r.memo->site_at(sc.position(), symbol);
  if (!site) return turn;
  InternalScope internal;
  const replayer::LibraryDecision decision = r.memo->decide(*site, key);
  if (!decision.skip) {
    turn.observe = true;
    turn.site = *site;
    turn.key = key;
    turn.started = sc.iterations_started();
    return turn;
  }
  turn.skip = true;  // from here on the call's ops are nimble's to issue, whatever happens
  try {
    sc.on_skipped_call(*decision.patches);
    if (r.comparison) end_replayed_block_if_done(r, *r.comparison);
    release_frees(r);
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  return turn;
}

void library_call_ended(const LibraryTurn& turn, bool succeeded, std::uint64_t host_ns) {
  if (!g_run) return;
  std::lock_guard<std::mutex> lock(g_run->mu);
  RunState& r = *g_run;
  if (!r.memo) return;
  const replayer::ShortCircuit& sc = *r.short_circuit;
  const replayer::LibrarySite& site = r.memo->sites().at(turn.site);
  // Whole: still the same iteration, and exactly the site's ops matched during the call.
  std::size_t end = site.first_op + site.ops;
  while (end < r.plan.ops.size() && r.plan.ops[end].kind == replayer::OpKind::Nop) ++end;
  std::optional<replayer::OpPatches> patches;
  if (succeeded && sc.armed() && sc.iterations_started() == turn.started && sc.position() == end) {
    const auto first = sc.patches().begin() + static_cast<std::ptrdiff_t>(site.first_op);
    patches.emplace(first, first + static_cast<std::ptrdiff_t>(site.ops));
  }
  r.memo->observed(turn.site, turn.key, patches, host_ns);
}

void short_circuit_host_visible(const char* what) {
  if (!g_run) return;
  std::lock_guard<std::mutex> lock(g_run->mu);
  if (!running()) return;
  InternalScope internal;
  try {
    g_run->short_circuit->on_host_visible_point(what);
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  release_frees(*g_run);
}

bool short_circuit_holds_free(FreeAsyncFn real, CUdeviceptr ptr, CUstream stream, StreamVariant variant) {
  if (!g_run) return false;
  std::lock_guard<std::mutex> lock(g_run->mu);
  RunState& r = *g_run;
  if (!running()) return false;
  InternalScope internal;
  try {
    if (!r.short_circuit->holding()) return false;  // nothing waits: the free goes out in order now
    if (map_stream(stream, variant) != r.stream) {
      r.short_circuit->on_host_visible_point("freed memory on another stream");
      release_frees(r);
      return false;
    }
  } catch (const std::exception& e) {
    stop_replay(e);
    release_frees(r);
    return false;
  }
  r.held_frees.push_back({real, ptr, stream});
  ++r.frees_held;
  return true;
}

}  // namespace nimble::hooks
