#include "run_mode.hpp"

#include <algorithm>
#include <atomic>
#include <map>
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
#include "nimble/replayer/run_session.hpp"
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
  std::unique_ptr<replayer::RunSession> session;
  std::vector<replayer::GraphExecutor*> executors;  // per recording, as the session numbers them
  std::vector<bool> own_streams;  // per recording: its ops replay on the program's recorded streams
  std::vector<trace::json> setups;                  // per recording: what was built
  std::vector<std::string> refusals;                // recorded iterations that could not be replayed, and why
  bool stepped_aside = false;  // the program launches its own CUDA graphs: nimble run leaves it alone
  std::uint64_t stream = 0;  // the stream the current iteration is issued on (map_stream)
  std::string summary_path;
};
std::atomic<RunState*> g_run{nullptr};

RunState* run_state() { return g_run.load(std::memory_order_acquire); }

void say(const std::string& text) {
  const std::string line = "nimble run: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Issuing or launching failed: the driver is in trouble; say so loudly and replay no more.
void stop_replay(const std::exception& e) {
  g_running.store(false, std::memory_order_relaxed);
  g_plain_phase.store(false, std::memory_order_relaxed);
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
    const trace::TaskKind kind = trace::kind_of(t);
    if ((kind == trace::TaskKind::Kernel || kind == trace::TaskKind::Memcpy || kind == trace::TaskKind::Memset) && t.stream) streams.insert(*t.stream);
  }
  if (streams.size() > 1 && !config().run_multi_stream) {
    return "the iteration used " + std::to_string(streams.size()) + " streams; nimble run replays programs that issue "
           "their iteration on one stream when NIMBLE_RUN_MULTI_STREAM=0 (1, the default, replays several)";
  }
  if (streams.size() > 1 && config().run_max_streams > 1) {
    return "the iteration used " + std::to_string(streams.size()) + " streams; they are replayed on the program's own "
           "streams, so --max-streams must be 1";
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
  for (const auto& release : r.session->releasable_frees()) release();
}

trace::json phase_json(const replayer::IterationTimes& t) {
  return {{"iterations", t.iterations}, {"median_ms", t.median_ms}, {"p10_ms", t.p10_ms}, {"p90_ms", t.p90_ms}};
}

trace::json comparison_json(const replayer::Comparison& c) {
  const replayer::IterationTimes replayed = c.times(replayer::Phase::Replay), plain = c.times(replayer::Phase::Plain);
  trace::json j = {{"block", c.block()}, {"replayed", phase_json(replayed)}, {"plain", phase_json(plain)}};
  j["speedup"] = replayed.median_ms > 0 && plain.median_ms > 0 ? trace::json(plain.median_ms / replayed.median_ms)
                                                               : trace::json(nullptr);
  return j;
}

std::string comparison_text(const replayer::Comparison& c) {
  const replayer::IterationTimes replayed = c.times(replayer::Phase::Replay), plain = c.times(replayer::Phase::Plain);
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
  return text;
}

// The cuBLASLt heuristics answered from memory: one count for the whole process.
std::string heuristics_text() {
  const QueryStats q = query_stats();
  if (!q.answered && !q.asked) return "";
  char line[300];
  std::snprintf(line, sizeof line, "nimble run: cuBLASLt heuristics: %zu answered from memory, %zu asked%s\n", q.answered,
                q.asked, q.unstable ? " (some inputs gave changing answers: always asked)" : "");
  return line;
}

// The recording that replayed most: its graphs, library calls and timings head the summary.
const replayer::Recording* main_recording(const replayer::RunSession& session, std::size_t* index) {
  const replayer::Recording* best = nullptr;
  const auto& all = session.recordings();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!best || all[i]->short_circuit->summary().iterations_replayed > best->short_circuit->summary().iterations_replayed) {
      best = all[i].get();
      *index = i;
    }
  }
  return best;
}

trace::json recording_json(const RunState& r, std::size_t i) {
  const replayer::Recording& rec = *r.session->recordings()[i];
  const replayer::ShortCircuitSummary& s = rec.short_circuit->summary();
  trace::json fallbacks = trace::json::array();
  for (const auto& [reason, count] : s.fallbacks) fallbacks.push_back({{"reason", reason}, {"count", count}});
  trace::json j = {{"trace", rec.name},
                   {"calls", rec.calls},
                   {"state", replayer::state_name(rec.state)},
                   {"iterations_replayed", s.iterations_replayed},
                   {"false_starts", s.false_starts},
                   {"fallbacks", fallbacks},
                   {"setup", r.setups[i]},
                   {"graphs", graph_stats(*r.executors[i], rec.plan)}};
  if (rec.state == replayer::RecordingState::Dropped) j["dropped_because"] = rec.dropped_because;
  if (rec.trial_speedup) j["trial_speedup"] = *rec.trial_speedup;
  if (rec.comparison) j["timings"] = comparison_json(*rec.comparison);
  if (rec.memo) j["library"] = library_json(*rec.memo);
  return j;
}

// Why nothing was replayed, in one line, or "" when something was.
std::string nothing_replayed_because(const RunState& r) {
  if (r.session->iterations_replayed() > 0) return "";
  std::string why;
  for (const std::string& refusal : r.refusals) why += (why.empty() ? "" : "; ") + refusal;
  for (const auto& rec : r.session->recordings()) {
    if (rec->state == replayer::RecordingState::Dropped) {
      why += (why.empty() ? "" : "; ") + rec->name + " was dropped: " + rec->dropped_because;
    } else {
      why += (why.empty() ? "" : "; ") + rec->name + " never matched the program's later calls";
    }
  }
  return why.empty() ? "no recorded iteration could be replayed" : why;
}

void write_summary() {
  RunState& r = *run_state();
  const replayer::RunSession& session = *r.session;
  std::size_t main_index = 0;
  // No recording at all when every recorded iteration was refused (or the program's own graphs):
  // the summary then has the counts (zero) and why, without a main recording's setup and graphs.
  const replayer::Recording* main = main_recording(session, &main_index);
  std::size_t segments = 0, deferred = 0, host_copies = 0, collectives = 0, false_starts = 0;
  std::map<std::string, std::size_t> reasons;
  trace::json recordings = trace::json::array();
  for (std::size_t i = 0; i < session.recordings().size(); ++i) {
    const replayer::ShortCircuitSummary& s = session.recordings()[i]->short_circuit->summary();
    segments += s.segments_launched;
    deferred += s.calls_deferred;
    host_copies += s.host_copies;
    collectives += s.collectives;
    false_starts += s.false_starts;
    for (const auto& [reason, count] : s.fallbacks) reasons[reason] += count;
    recordings.push_back(recording_json(r, i));
  }
  trace::json fallbacks = trace::json::array();
  for (const auto& [reason, count] : reasons) fallbacks.push_back({{"reason", reason}, {"count", count}});
  trace::json summary = {{"format", "nimble-run"},
                         {"version", 1},
                         {"trace", trace_output_path()},
                         {"iterations_replayed", session.iterations_replayed()},
                         {"segments_launched", segments},
                         {"calls_deferred", deferred},
                         {"host_copies_run_in_place", host_copies},
                         {"collectives_run_in_place", collectives},
                         {"false_starts", false_starts},
                         {"frees_held_back", session.frees_held()},
                         {"fallbacks", fallbacks},
                         {"recordings", recordings},
                         {"refused", r.refusals},
                         {"calls_seen", session.calls_seen()}};
  if (const std::string why = nothing_replayed_because(r); !why.empty()) summary["nothing_replayed_because"] = why;
  if (main) {
    summary["setup"] = r.setups[main_index];
    summary["graphs"] = graph_stats(*r.executors[main_index], main->plan);
    if (session.options().compare_block > 0 && main->comparison) summary["compare"] = comparison_json(*main->comparison);
    if (main->memo) summary["library"] = library_json(*main->memo);
  }
  if (auto error = trace::write_file_atomically(r.summary_path, trace::pretty_json(summary) + "\n")) {
    say("could not write " + r.summary_path + ": " + *error);
  }
}

std::string summary_text(const RunState& r) {
  std::string text = r.session->summary_text();
  for (const auto& rec : r.session->recordings()) {
    if (rec->memo) text += library_text(*rec->memo);
  }
  text += heuristics_text();
  std::size_t main_index = 0;
  const replayer::Recording* main = main_recording(*r.session, &main_index);
  if (main && r.session->options().compare_block > 0 && main->comparison) text += comparison_text(*main->comparison);
  if (const std::string why = nothing_replayed_because(r); !why.empty()) text += "nimble run: nothing was replayed: " + why + "\n";
  return text;
}

void at_exit() {
  RunState* state = run_state();
  if (!state) return;
  try {
    std::lock_guard<std::mutex> lock(state->mu);
    InternalScope internal;
    g_running.store(false, std::memory_order_relaxed);
    try {
      state->session->finish("the program ended in the middle of a recorded iteration");
      release_frees(*state);
    } catch (const std::exception& e) {
      say(std::string("at exit: ") + e.what());
    }
    g_plain_phase.store(false, std::memory_order_relaxed);
    const std::string text = summary_text(*state);
    std::fwrite(text.data(), 1, text.size(), stderr);
    write_summary();
  } catch (...) {
    // Never let an exit-time problem reach the program.
  }
}

// Device, managed or pinned host memory: anything a kernel could dereference.
bool cuda_knows_address(std::uint64_t value) {
  RunState* r = run_state();
  if (value == 0 || !r) return false;
  unsigned int type = 0;
  return r->api.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, value) == CUDA_SUCCESS;
}


// Created with the first recorded iteration (under the recorder's lock), never destroyed.
RunState& make_run_state() {
  if (RunState* r = run_state()) return *r;
  auto* r = new RunState();
  const Config& c = config();
  replayer::RunOptions options;
  options.max_recordings = static_cast<std::size_t>(c.run_recordings);
  options.trial_block = static_cast<std::size_t>(c.run_trial);
  options.min_speedup = c.run_min_speedup;
  options.compare_block = static_cast<std::size_t>(c.run_compare);
  options.stale_calls = static_cast<std::size_t>(c.run_stale);
  options.side_exit_looks = static_cast<std::size_t>(c.run_side_exit_looks);
  r->session = std::make_unique<replayer::RunSession>(options, &cuda_knows_address, &now_ns);
  r->summary_path = run_output_path(c, trace_output_path());
  g_run.store(r, std::memory_order_release);
  std::atexit(at_exit);
  return *r;
}

// After every change of the session: what the lock-free paths read.
void publish(RunState& r) {
  release_frees(r);
  g_plain_phase.store(r.session->plain_phase(), std::memory_order_relaxed);
  if (r.session->take_request()) g_watch_wanted.store(true, std::memory_order_relaxed);
}

// Whether nimble run keeps running after a recording was added or refused: while something is
// live, or the automatic range may find something else.
bool keep_running(const RunState& r) {
  if (r.session->gave_up()) return false;
  if (config().range == CaptureRange::Auto) return true;
  for (const auto& rec : r.session->recordings()) {
    if (rec->state != replayer::RecordingState::Dropped) return true;
  }
  return false;
}

// The recorded iteration as a recording, or the reason it cannot be one.
std::string add_recording(RunState& r, trace::Trace trace, const RecordedIteration& recorded) {
  scheduler::Options options;
  options.max_streams = static_cast<std::uint32_t>(config().run_max_streams);
  scheduler::schedule_trace(trace, options);
  replayer::PlanResult planned = replayer::build_plan(trace);
  if (std::string reason = why_not(trace, planned); !reason.empty()) return reason;
  if (r.executors.empty()) {
    std::string missing;
    if (!replayer::load_driver_api(&driver_function, r.api, &missing)) return "the driver lacks " + missing;
  }
  replayer::RecordingSetup setup;
  setup.name = recorded.path;
  setup.plan = replayer::with_program_pointers(std::move(*planned.plan));
  // One stream: graphs go wherever the program issues the iteration (any stream). Several: each
  // op replays on the stream it was recorded on, and a segment ends where the stream changes.
  std::vector<std::size_t> breaks = recorded.event_points;
  std::set<std::uint64_t> program_streams;
  for (const replayer::Op& op : setup.plan.ops) {
    if (op.kind != replayer::OpKind::Nop && op.program_stream) program_streams.insert(op.program_stream);
  }
  const bool own_streams = program_streams.size() > 1;
  // CU_STREAM_PER_THREAD names another stream on each thread: a graph launched on it from
  // whichever thread issued a segment's last call could land on the wrong one.
  if (own_streams && program_streams.count(deps::kPerThreadStream)) {
    return "the iteration used " + std::to_string(program_streams.size()) + " streams, one of them a per-thread "
           "default stream, which nimble run does not replay across streams";
  }
  std::uint64_t last_stream = 0;
  for (std::size_t i = 0; i < setup.plan.ops.size(); ++i) {
    replayer::Op& op = setup.plan.ops[i];
    if (!own_streams) {
      op.program_stream = 0;
    } else if (op.program_stream) {
      if (last_stream && op.program_stream != last_stream) breaks.push_back(i);
      last_stream = op.program_stream;
    }
  }
  // Host functions are ops that only order (a segment ends there and the program's own call runs
  // then); so are event records and waits, which are not ops: a segment ends where they were.
  setup.segments = replayer::segments_of(setup.plan, static_cast<std::size_t>(config().run_piece), breaks);
  // One stream keeps the program's order: any argument may change. A schedule over several
  // streams was built from the recorded addresses: they must stay.
  setup.rule = setup.plan.streams > 1 ? replayer::ArgumentRule::SameAddresses : replayer::ArgumentRule::AnyBytes;
  setup.first_signature = recorded.first_signature;
  setup.fingerprint = recorded.fingerprint;
  setup.skip_library = config().run_skip_library;
  const auto backend = setup.plan.streams > 1 ? replayer::Backend::StreamGraph : replayer::Backend::Graph;
  replayer::GraphExecutor* built = nullptr;
  setup.make_executor = [&](const replayer::ReplayPlan& plan, const std::vector<replayer::Segment>& segments) {
    auto executor = std::make_unique<replayer::GraphExecutor>(r.api, plan, segments, backend,
                                                              static_cast<std::size_t>(config().run_variants));
    built = executor.get();
    return std::unique_ptr<replayer::Executor>(std::move(executor));
  };
  const std::size_t ops = setup.plan.ops.size(), streams = static_cast<std::size_t>(setup.plan.streams);
  const std::size_t segments = setup.segments.size();
  const auto rule = setup.rule;
  r.session->add(std::move(setup));
  built->set_stream(reinterpret_cast<CUstream>(r.stream));
  r.executors.push_back(built);
  r.own_streams.push_back(own_streams);
  r.setups.push_back({{"ops", ops},
                      {"segments", segments},
                      {"graphs", built->graphs()},
                      {"streams", streams},
                      {"program_streams", own_streams ? program_streams.size() : 1},
                      {"arguments", rule == replayer::ArgumentRule::AnyBytes ? "any bytes may change" : "same device addresses"},
                      {"piece", config().run_piece},
                      {"variants", config().run_variants}});
  const replayer::RunOptions& o = r.session->options();
  say("replaying " + recorded.path + ": " + std::to_string(ops) + " recorded ops in " + std::to_string(built->graphs()) +
      " graph(s) of up to " + std::to_string(streams) + " stream(s); later iterations that match it are launched as graphs" +
      (o.compare_block == 0 && o.trial_block > 0
           ? " once a trial (blocks of " + std::to_string(o.trial_block) + " replayed and plain iterations) shows replay is faster"
           : "") +
      " (summary at exit, " + r.summary_path + ")");
  return "";
}

}  // namespace

bool run_recorded(trace::Trace trace, const RecordedIteration& recorded) {
  InternalScope internal;
  RunState& r = make_run_state();
  std::lock_guard<std::mutex> lock(r.mu);
  const bool own_graphs = std::any_of(trace.tasks.begin(), trace.tasks.end(), [](const trace::Task& t) {
    return trace::kind_of(t) == trace::TaskKind::Graph || trace::kind_of(t) == trace::TaskKind::GraphLaunch;
  });
  if (own_graphs) {
    // Its iteration is (partly) the program's own CUDA graphs (torch.cuda.graph, torch.compile
    // with reduce-overhead, XLA command buffers), which nimble run does not replay yet: it steps
    // aside for good rather than keep looking, so the program runs at the idle cost.
    r.refusals.push_back(recorded.path + ": the iteration launches the program's own CUDA graphs");
    r.stepped_aside = true;
    g_running.store(false, std::memory_order_relaxed);
    say("not replaying " + recorded.path + ": the iteration launches the program's own CUDA graphs (cuGraphLaunch), "
        "which nimble run does not replay; it steps aside and the program runs as it is.");
    return false;
  }
  std::string reason;
  try {
    reason = add_recording(r, std::move(trace), recorded);
  } catch (const std::exception& e) {
    reason = e.what();
  }
  if (!reason.empty()) {
    r.refusals.push_back(recorded.path + ": " + reason);
    r.session->reject(recorded.fingerprint);
    say("not replaying " + recorded.path + ": " + reason + ". The program runs as it is" +
        (config().range == CaptureRange::Auto && !r.session->gave_up() ? "; nimble keeps looking for another iteration." : "."));
  }
  publish(r);
  const bool running_on = keep_running(r);
  g_running.store(running_on, std::memory_order_relaxed);
  if (!running_on && r.session->gave_up()) say("stopped looking: too many recorded iterations could not be replayed or did not pay");
  return running_on && r.session->take_request();
}

bool run_recording_failed(const RecordedIteration& recorded) {
  RunState& r = make_run_state();
  std::lock_guard<std::mutex> lock(r.mu);
  r.refusals.push_back(recorded.path + ": the trace could not be written");
  r.session->reject(recorded.fingerprint);
  const bool running_on = keep_running(r);
  g_running.store(running_on, std::memory_order_relaxed);
  return running_on && r.session->take_request();
}

bool run_knows_period(std::uint64_t fingerprint) {
  RunState* r = run_state();
  if (!r) return false;
  std::lock_guard<std::mutex> lock(r->mu);
  return r->session->knows(fingerprint);
}

std::vector<std::pair<std::uint64_t, bool>> run_take_primer() {
  std::vector<std::pair<std::uint64_t, bool>> out;
  RunState* r = run_state();
  if (!r) return out;
  std::lock_guard<std::mutex> lock(r->mu);
  for (const replayer::PrimerCall& c : r->session->take_primer()) out.emplace_back(c.signature, c.kernel);
  return out;
}

bool run_gave_up() {
  RunState* r = run_state();
  if (!r) return false;
  std::lock_guard<std::mutex> lock(r->mu);
  return r->stepped_aside || r->session->gave_up();
}

bool run_concerns(std::uint64_t signature) {
  const RunState* r = run_state();
  return r && r->session->concerns(signature);
}

void run_passed_by() {
  if (RunState* r = run_state(); r && r->session->passed_by()) g_watch_wanted.store(true, std::memory_order_relaxed);
}

bool run_counts_plain(std::uint64_t signature) {
  RunState* r = run_state();
  if (!r) return false;
  std::lock_guard<std::mutex> lock(r->mu);
  if (!running()) return false;
  const bool program_runs = r->session->counts_plain(signature);
  g_plain_phase.store(r->session->plain_phase(), std::memory_order_relaxed);
  return program_runs;
}

void run_pause(const char* why) {
  RunState* r = run_state();
  if (!r) return;
  std::lock_guard<std::mutex> lock(r->mu);
  InternalScope internal;
  g_running.store(false, std::memory_order_relaxed);
  g_plain_phase.store(false, std::memory_order_relaxed);
  try {
    r->session->interrupt(why);
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  release_frees(*r);
}

void run_resume() {
  RunState* r = run_state();
  if (!r) return;
  std::lock_guard<std::mutex> lock(r->mu);
  g_running.store(keep_running(*r), std::memory_order_relaxed);
}

bool short_circuit_takes(CUstream stream, StreamVariant variant, std::uint64_t signature, replayer::GpuCall* call) {
  RunState* state = run_state();
  if (!state) return false;
  RunState& r = *state;
  std::lock_guard<std::mutex> lock(r.mu);
  if (!running()) return false;
  InternalScope internal;
  replayer::RunSession& session = *r.session;
  try {
    bool deferred = false;
    const std::uint64_t handle = map_stream(stream, variant);
    if (call) std::visit([&](auto& c) { c.stream = handle; }, *call);
    const replayer::Recording* active = session.active();
    const bool own_streams = active && r.own_streams[session.index_of(*active)];
    if (!call) {
      session.on_host_visible_point("issued a task nimble run does not replay");
    } else if (session.awaiting_iteration()) {
      // Whatever arms now is issued on this stream: graphs go there.
      if (handle != r.stream) {
        r.stream = handle;
        for (replayer::GraphExecutor* e : r.executors) e->set_stream(reinterpret_cast<CUstream>(handle));
      }
      deferred = session.on_call(signature, std::move(*call)) == replayer::Action::Deferred;
    } else if (handle != r.stream && !own_streams) {
      session.on_host_visible_point("issued work on another stream");
    } else {
      deferred = session.on_call(signature, std::move(*call)) == replayer::Action::Deferred;
    }
    publish(r);
    return deferred;
  } catch (const std::exception& e) {
    stop_replay(e);
    release_frees(r);
    return false;
  }
}

LibraryTurn library_call_begins(const char* symbol, std::uint64_t key) {
  LibraryTurn turn;
  RunState* state = run_state();
  if (!state) return turn;
  RunState& r = *state;
  std::lock_guard<std::mutex> lock(r.mu);
  if (!running()) return turn;
  replayer::Recording* active = r.session->active();
  if (!active || !active->memo) return turn;
  replayer::ShortCircuit& sc = *active->short_circuit;
  if (!sc.armed() || sc.awaiting_iteration()) return turn;  // only inside a recorded iteration
  const std::optional<std::size_t> site = active->memo->site_at(sc.position(), symbol);
  if (!site) return turn;
  InternalScope internal;
  turn.recording = r.session->index_of(*active);
  const replayer::LibraryDecision decision = active->memo->decide(*site, key);
  if (!decision.skip) {
    turn.observe = true;
    turn.site = *site;
    turn.key = key;
    turn.started = sc.iterations_started();
    return turn;
  }
  turn.skip = true;  // from here on the call's ops are nimble's to issue, whatever happens
  try {
    r.session->on_skipped_call(*decision.patches);
    publish(r);
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  return turn;
}

void library_call_ended(const LibraryTurn& turn, bool succeeded, std::uint64_t host_ns) {
  RunState* state = run_state();
  if (!state) return;
  RunState& r = *state;
  std::lock_guard<std::mutex> lock(r.mu);
  if (turn.recording >= r.session->recordings().size()) return;
  replayer::Recording& rec = *r.session->recordings()[turn.recording];
  if (!rec.memo) return;
  const replayer::ShortCircuit& sc = *rec.short_circuit;
  const replayer::LibrarySite& site = rec.memo->sites().at(turn.site);
  // Whole: still the same iteration, and exactly the site's ops matched during the call.
  std::size_t end = site.first_op + site.ops;
  while (end < rec.plan.ops.size() && rec.plan.ops[end].kind == replayer::OpKind::Nop) ++end;
  std::optional<replayer::OpPatches> patches;
  if (succeeded && sc.armed() && sc.iterations_started() == turn.started && sc.position() == end) {
    const auto first = sc.patches().begin() + static_cast<std::ptrdiff_t>(site.first_op);
    patches.emplace(first, first + static_cast<std::ptrdiff_t>(site.ops));
  }
  rec.memo->observed(turn.site, turn.key, patches, host_ns);
}

void short_circuit_host_visible(const char* what) {
  RunState* state = run_state();
  if (!state || !state->session->engaged()) return;  // nothing can be held back
  RunState& r = *state;
  std::lock_guard<std::mutex> lock(r.mu);
  if (!running()) return;
  InternalScope internal;
  try {
    r.session->on_host_visible_point(what);
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  publish(r);
}

bool short_circuit_holds_free(FreeAsyncFn real, CUdeviceptr ptr, CUstream stream, StreamVariant variant) {
  RunState* state = run_state();
  if (!state) return false;
  RunState& r = *state;
  std::lock_guard<std::mutex> lock(r.mu);
  if (!running()) return false;
  InternalScope internal;
  try {
    if (!r.session->holding()) return false;  // nothing waits: the free goes out in order now
    if (map_stream(stream, variant) != r.stream) {
      r.session->on_host_visible_point("freed memory on another stream");
      publish(r);
      return false;
    }
  } catch (const std::exception& e) {
    stop_replay(e);
    release_frees(r);
    return false;
  }
  return r.session->hold_free([real, ptr, stream] {
    if (const CUresult result = real(ptr, stream); result != CUDA_SUCCESS) {
      log_message("nimble run: a held-back cuMemFreeAsync failed with error " + std::to_string(result));
    }
  });
}

}  // namespace nimble::hooks
