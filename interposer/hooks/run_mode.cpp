#include "run_mode.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "config.hpp"
#include "library_queries.hpp"
#include "nimble/replayer/comparison.hpp"
#include "nimble/replayer/library_memo.hpp"
#include "nimble/replayer/run_executor.hpp"
#include "nimble/replayer/run_report.hpp"
#include "nimble/replayer/run_session.hpp"
#include "nimble/trace/io.hpp"
#include "output.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"
#include "signature.hpp"
#include "trace_writer.hpp"

namespace nimble::hooks {
namespace {

// A recorded iteration made into a recording (its graphs built), or the reason it cannot be one:
// all that touches nothing of the session's, so that nimble's thread can make it while the program
// runs on (NIMBLE_RUN_BACKGROUND).
struct Prepared {
  replayer::RecordedIteration recorded;
  std::unique_ptr<replayer::Recording> recording;  // null: refused
  replayer::GraphExecutor* executor = nullptr;     // the recording's
  bool own_streams = false;
  bool own_graphs = false;  // the iteration launches the program's own CUDA graphs: nimble run steps aside
  std::string refused_because;
  trace::json described;
  std::uint64_t handed_ns = 0, began_ns = 0, planned_ns = 0, built_ns = 0, ready_ns = 0;
  bool in_background = false;
  double trace_ms = 0;  // built on nimble's thread, in the background
  // Its graphs could not be built on nimble's thread (why): the setup, to build them on the
  // program's when it is added.
  std::optional<replayer::RecordingSetup> rebuild;
  std::string rebuild_because;
  replayer::Backend backend = replayer::Backend::Graph;
};

// Created once and never destroyed: wrappers may run during exit.
struct RunState {
  std::mutex mu;
  replayer::DriverApi api;
  replayer::DriverApi background_api;  // api, its captures holding g_captures (graphs built on nimble's thread)
  std::unique_ptr<replayer::RunSession> session;
  std::vector<replayer::GraphExecutor*> executors;  // per recording, as the session numbers them
  std::vector<bool> own_streams;  // per recording: its ops replay on the program's recorded streams
  std::vector<trace::json> setups;                  // per recording: what was built
  std::vector<std::string> refusals;                // recorded iterations that could not be replayed, and why
  bool stepped_aside = false;  // the program launches its own CUDA graphs: nimble run leaves it alone
  std::uint64_t stream = 0;  // the stream the current iteration is issued on (map_stream)
  std::string summary_path;
  std::optional<std::string> api_missing;  // set once the driver API was looked up: what it lacks ("" none)
  std::optional<Prepared> ready;  // made on nimble's thread, until the program's next GPU call adds it
  std::size_t preparing = 0;      // recorded iterations handed to nimble's thread and not ready yet
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
  return {{"released", executor.released()},  // its recording was dropped and its graphs given back
          {"most_updated", most},
          {"execs", s.execs},
          {"execs_refused", s.execs_refused},
          {"launches", s.launches},
          {"launch_us_mean", replayer::mean_us(s.launch_ns, s.launches)},
          {"node_updates", s.node_updates},
          {"node_update_us_mean", replayer::mean_us(s.update_ns, s.node_updates)}};
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Once no call is held back any more, the frees that waited for them go out, in order.
void release_frees(RunState& r) {
  for (const auto& release : r.session->releasable_frees()) release();
}

replayer::HookCounts hook_counts() {
  return {{g_side_thread_count.load(std::memory_order_relaxed), g_side_calls.load(std::memory_order_relaxed)},
          {g_looks_again.load(std::memory_order_relaxed), g_calls_looked_at.load(std::memory_order_relaxed),
           g_look_ns.load(std::memory_order_relaxed)},
          g_program_calls.load(std::memory_order_relaxed)};
}

replayer::HeuristicsCounts heuristics_counts() {
  const QueryStats q = query_stats();
  return {q.answered, q.asked, q.unstable, q.rested, q.rests};
}

// What the summary takes from the hooks: each recording's setup and graph statistics, the
// heuristics answered from memory.
replayer::RunReportInput report_input(const RunState& r) {
  replayer::RunReportInput in{*r.session, trace_output_path(), r.refusals, {}, {}, hook_counts()};
  for (std::size_t i = 0; i < r.session->recordings().size() && i < r.executors.size(); ++i) {
    in.extras.push_back({r.setups[i], graph_stats(*r.executors[i], r.session->recordings()[i]->plan)});
  }
  in.heuristics = heuristics_counts();
  return in;
}

void write_summary() {
  const RunState& r = *run_state();
  const trace::json summary = replayer::run_summary_json(report_input(r));
  if (auto error = trace::write_file_atomically(r.summary_path, trace::pretty_json(summary) + "\n")) {
    say("could not write " + r.summary_path + ": " + *error);
  }
}

// Whether anything was recorded: the run state also exists once looking rested (rest_looking)
// with nothing recorded, and then run_nothing_recorded writes the summary with the reason.
bool recorded_anything(const RunState& r) {
  return !r.session->recordings().empty() || !r.refusals.empty() || r.ready || r.preparing > 0;
}

void at_exit() {
  RunState* state = run_state();
  if (!state) return;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    if (!recorded_anything(*state)) {
      g_running.store(false, std::memory_order_relaxed);
      return;
    }
  }
  // The trace files first: the summary must be newer than them (the CLI shows only a summary
  // written with the trace), whichever exit handler was registered first.
  const std::uint64_t exiting = now_ns();
  background_trace_writer().close();
  try {
    std::lock_guard<std::mutex> lock(state->mu);
    InternalScope internal;
    if (state->ready) {
      state->refusals.push_back(state->ready->recorded.path +
                                (state->ready->ready_ns < exiting
                                     ? (program_captures_open()
                                            ? ": its graphs were ready, but the program kept a CUDA graph capture of its own open"
                                            : ": its graphs were ready, but the program made no GPU call after that")
                                     : ": the program ended before its graphs were ready (they were being built while it ran on)"));
      state->ready.reset();
    }
    try {
      state->session->finish("the program ended in the middle of a recorded iteration");
      release_frees(*state);
    } catch (const std::exception& e) {
      say(std::string("at exit: ") + e.what());
    }
    // Only now: until the held calls went out, other threads' calls had to wait for them.
    g_running.store(false, std::memory_order_relaxed);
    g_plain_phase.store(false, std::memory_order_relaxed);
    const std::string text = replayer::run_summary_text(report_input(*state));
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
  options.trials = static_cast<std::size_t>(c.run_trials);
  options.recheck_iterations = static_cast<std::size_t>(c.run_recheck);
  options.compare_block = static_cast<std::size_t>(c.run_compare);
  options.stale_calls = static_cast<std::size_t>(c.run_stale);
  options.side_exit_looks = static_cast<std::size_t>(c.run_side_exit_looks);
  options.side_exit_shortest = static_cast<std::size_t>(c.run_side_exit_shortest);
  options.side_exits = c.run_side_exits;
  options.trial_moving = c.run_trial_moving;
  options.guard.spans = static_cast<std::size_t>(c.run_guard);
  r->session = std::make_unique<replayer::RunSession>(options, &cuda_knows_address, &now_ns);
  r->summary_path = run_output_path(c, trace_output_path());
  g_run.store(r, std::memory_order_release);
  g_guard_counting.store(r->session->guard().options().spans > 0, std::memory_order_relaxed);
  std::atexit(at_exit);
  return *r;
}

// A recording that may still begin an iteration, rest or ask for a look (after giving up too).
bool any_live(const RunState& r) {
  for (const auto& rec : r.session->recordings()) {
    if (rec->state != replayer::RecordingState::Dropped) return true;
  }
  return false;
}

// Whether nimble run keeps running after a recording was added, refused or dropped: while
// something is live (it replays on), or the automatic range may find something else.
bool keep_running(const RunState& r) {
  return any_live(r) || (config().range == CaptureRange::Auto && !r.session->gave_up());
}

// Once nothing is left to replay or find, the wrappers take the idle path (calls go straight to
// the driver).
void idle_if_done(const RunState& r) {
  if (!keep_running(r)) g_running.store(false, std::memory_order_relaxed);
}

std::mutex g_captures;  // nimble's thread captures / the program synchronises its context
std::mutex g_building;  // nimble's thread builds graphs / the program begins a capture of its own
const pid_t g_process = getpid();  // a forked child holds no lock (its copy may be held by a thread it lacks)

// A dropped recording's graphs, execs and stand-in memory go back, apart from the program's
// captures (g_building: none can begin meanwhile). Never waits for g_building (r.mu is held):
// a later change of the session tries again.
void release_dropped(RunState& r) {
  if (!r.session->release_pending() || getpid() != g_process) return;
  std::unique_lock<std::mutex> building(g_building, std::try_to_lock);
  if (!building || program_captures_open()) return;
  InternalScope internal;
  const std::size_t n = r.session->release_dropped();
  debug_message("released the graphs of " + std::to_string(n) + " dropped recording(s)");
}

// After every change of the session: what the lock-free paths read.
void publish(RunState& r) {
  release_frees(r);
  release_dropped(r);
  g_plain_phase.store(r.session->plain_phase(), std::memory_order_relaxed);
  if (r.session->take_request()) g_watch_wanted.store(true, std::memory_order_relaxed);
  idle_if_done(r);
}

replayer::RunSetupOptions setup_options() {
  const Config& c = config();
  replayer::RunSetupOptions o;
  o.piece = static_cast<std::size_t>(c.run_piece);
  o.max_streams = static_cast<std::uint32_t>(c.run_max_streams);
  o.multi_stream = c.run_multi_stream;
  o.skip_library = c.run_skip_library;
  o.library.recheck = static_cast<std::size_t>(c.run_library_recheck);
  o.library.symbols = replayer::function_names(c.run_skip_calls);
  return o;
}

thread_local std::unique_lock<std::mutex> t_capturing;  // nimble's thread, from a capture's begin to its end
// A side exit to record from the call short_circuit_takes just left to the program (this thread's).
thread_local std::optional<replayer::SideExitWindow> t_side_exit;

// nimble's thread, before it builds graphs: g_building, taken while no capture of the program's is
// open (it then cannot begin one until the build is done). Null when the program kept capturing
// for 10 s.
std::unique_lock<std::mutex> build_apart_from_program_captures() {
  for (int waited_ms = 0; waited_ms < 10000; ++waited_ms) {
    std::unique_lock<std::mutex> building(g_building);
    if (!program_captures_open()) return building;
    building.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return {};
}

// What nimble's thread builds graphs with: the driver, but for captures, which hold g_captures.
CUresult CUDAAPI begin_capture_held(CUstream stream, CUstreamCaptureMode mode) {
  t_capturing = std::unique_lock<std::mutex>(g_captures);
  const CUresult r = run_state()->api.begin_capture(stream, mode);
  if (r != CUDA_SUCCESS) t_capturing.unlock();
  return r;
}
CUresult CUDAAPI end_capture_held(CUstream stream, CUgraph* graph) {
  const CUresult r = run_state()->api.end_capture(stream, graph);
  if (t_capturing) t_capturing.unlock();
  return r;
}

// Looked up once, on the program's thread: whether the driver has all the executor needs.
bool load_api(RunState& r) {
  if (!r.api_missing) {
    std::string missing;
    r.api_missing = replayer::load_driver_api(&driver_function, r.api, &missing) ? "" : missing;
    r.background_api = r.api;
    r.background_api.begin_capture = &begin_capture_held;
    r.background_api.end_capture = &end_capture_held;
  }
  return r.api_missing->empty();
}

// A recorded iteration that cannot become a recording, and why.
Prepared refused(const RecordedIteration& recorded, std::string why) {
  Prepared p;
  p.recorded = recorded;
  p.refused_because = std::move(why);
  return p;
}

double ms_between(std::uint64_t from_ns, std::uint64_t to_ns) { return static_cast<double>(to_ns - from_ns) / 1e6; }

// Builds the recording of `setup` (its executor: graphs) into p; on nimble's thread (`background`)
// with the program's kernel limits left alone and the captures held apart from its context syncs.
void build_recording(const RunState& r, Prepared& p, replayer::RecordingSetup setup, bool background) {
  std::unique_lock<std::mutex> building;
  if (background) {
    building = build_apart_from_program_captures();
    if (!building) throw replayer::ReplayError("the program kept a CUDA graph capture of its own open for 10 s");
  }
  const replayer::Backend backend = p.backend;
  const replayer::DriverApi& api = background ? r.background_api : r.api;
  const auto limits = background ? replayer::Replayer::Limits::MustFit : replayer::Replayer::Limits::Raise;
  setup.make_executor = [&](const replayer::ReplayPlan& plan, const std::vector<replayer::Segment>& segments) {
    auto executor = std::make_unique<replayer::GraphExecutor>(api, plan, segments, backend,
                                                              static_cast<std::size_t>(config().run_variants), limits);
    p.executor = executor.get();
    return std::unique_ptr<replayer::Executor>(std::move(executor));
  };
  p.recording = r.session->build(std::move(setup));
}

// The recorded iteration as a recording (replayer/run_setup.hpp decides), its graphs built, or the
// reason it cannot be one. Touches nothing of the session's: runs on the program's thread or, in
// the background, on nimble's, where it leaves the program's kernel limits alone and gives graphs
// it cannot build there to the program's thread.
Prepared prepare(const RunState& r, trace::Trace& trace, const RecordedIteration& recorded, bool background) {
  Prepared p;
  p.recorded = recorded;
  p.began_ns = now_ns();
  replayer::PreparedRecording prepared = replayer::prepare_recording(trace, recorded, setup_options());
  p.planned_ns = p.built_ns = now_ns();
  p.own_graphs = prepared.own_graphs;
  p.own_streams = prepared.own_streams;
  p.described = prepared.description();
  p.refused_because = prepared.refused_because;
  if (!prepared.setup || prepared.own_graphs) return p;
  if (!r.api_missing || !r.api_missing->empty()) {
    p.refused_because = "the driver lacks " + r.api_missing.value_or("its API");
    return p;
  }
  p.backend = prepared.stream_graphs ? replayer::Backend::StreamGraph : replayer::Backend::Graph;
  std::optional<replayer::RecordingSetup> kept;
  if (background) kept = *prepared.setup;  // a copy: the build consumes the setup
  try {
    build_recording(r, p, std::move(*prepared.setup), background);
  } catch (const std::exception& e) {
    p.recording.reset();
    p.executor = nullptr;
    if (kept) {
      p.rebuild = std::move(kept);
      p.rebuild_because = e.what();
    } else {
      p.refused_because = e.what();
    }
  }
  p.built_ns = now_ns();
  return p;
}

// What was prepared becomes one of the session's recordings, or a refusal told on stderr. Under
// the lock. True when nimble should look for another iteration right away (nothing replayable yet).
bool adopt(RunState& r, Prepared p) {
  const RecordedIteration& recorded = p.recorded;
  if (p.own_graphs && !recorded.side_exit) {
    // An iteration of the program's own graph launches and nothing nimble could launch: it steps
    // aside for good rather than keep looking, so the program runs at the idle cost. (A side
    // exit's stretch like that is only refused: the iteration it leaves is still replayed.)
    r.refusals.push_back(recorded.path + ": " + p.refused_because);
    r.stepped_aside = true;
    g_running.store(false, std::memory_order_relaxed);
    say("not replaying " + recorded.path + ": the iteration launches the program's own CUDA graphs (cuGraphLaunch) "
        "and nothing else nimble could launch for it; it steps aside and the program runs as it is.");
    return false;
  }
  double rebuilt_ms = 0;
  if (p.rebuild) {
    const std::uint64_t began = now_ns();
    try {
      build_recording(r, p, std::move(*p.rebuild), /*background=*/false);
    } catch (const std::exception& e) {
      p.recording.reset();
      p.refused_because = e.what();
    }
    rebuilt_ms = ms_between(began, now_ns());
  } else if (p.recording && p.in_background) {
    p.executor->raise_limits();  // as a recording built here has them, for as long as it lives
  }
  // The same iteration found again under another fingerprint (the inference service on the H200
  // held two recordings of one batch length, each replaying half its steps, each trial undecided):
  // refused, and known from now on.
  const replayer::Recording* same = p.recording ? r.session->same_calls_as(*p.recording) : nullptr;
  if (same) {
    p.refused_because = "it holds the same calls as " + same->name + ", which nimble run holds already";
    p.recording.reset();  // (its graphs with it)
  }
  if (p.recording) {
    const std::size_t ops = p.recording->plan.ops.size(), streams = static_cast<std::size_t>(p.recording->plan.streams);
    r.session->add(std::move(p.recording));
    p.executor->set_stream(reinterpret_cast<CUstream>(r.stream));
    r.executors.push_back(p.executor);
    r.own_streams.push_back(p.own_streams);
    trace::json& described = p.described;
    described["graphs"] = p.executor->graphs();
    described["piece"] = config().run_piece;
    described["variants"] = config().run_variants;
    replayer::RecordingWait wait;
    wait.closing = recorded.closing;
    wait.plan_ms = ms_between(p.began_ns, p.planned_ns);
    wait.graphs_ms = ms_between(p.planned_ns, p.built_ns);
    wait.in_background = p.in_background;
    wait.background_trace_ms = p.trace_ms;
    wait.graphs_rebuilt_because = p.rebuild_because;
    wait.graphs_rebuilt_ms = rebuilt_ms;
    wait.ready_after_ms = recorded.closing.total_ms() + ms_between(p.in_background ? p.handed_ns : p.began_ns, now_ns());
    described["program_waited_ms"] = replayer::wait_json(wait);
    described["recorded_window_ms"] = recorded.closing.window_ms;  // against an iteration's time, what recording it cost
    r.setups.push_back(described);
    const replayer::RunOptions& o = r.session->options();
    say("replaying " + recorded.path + ": " + std::to_string(ops) + " recorded ops in " +
        std::to_string(p.executor->graphs()) + " graph(s) of up to " + std::to_string(streams) +
        " stream(s); later iterations that match it are launched as graphs" +
        (o.compare_block == 0 && o.trial_block > 0
             ? " once a trial (blocks of " + std::to_string(o.trial_block) + " replayed and plain iterations) shows replay is faster"
             : "") +
        " (summary at exit, " + r.summary_path + "); " + replayer::wait_text(wait));
  } else {
    r.refusals.push_back(recorded.path + ": " + p.refused_because);
    if (same) {
      r.session->pass_over(recorded.fingerprint);  // a duplicate is no failure
    } else if (!recorded.side_exit) {
      r.session->reject(recorded.fingerprint);  // (a side exit is no find the search gave up on)
    }
    say("not replaying " + recorded.path + ": " + p.refused_because + ". The program runs as it is" +
        (config().range == CaptureRange::Auto && !r.session->gave_up() ? "; nimble keeps looking for another iteration." : "."));
  }
  publish(r);
  const bool running_on = keep_running(r);
  g_running.store(running_on, std::memory_order_relaxed);
  if (!running_on && r.session->gave_up()) say("stopped looking: too many recorded iterations could not be replayed or did not pay");
  return running_on && r.session->take_request();
}

}  // namespace

std::unique_lock<std::mutex> run_hold_apart(bool context_sync, bool capture_begin) {
  if ((!context_sync && !capture_begin) || getpid() != g_process) return {};
  return std::unique_lock<std::mutex>(context_sync ? g_captures : g_building);
}

bool run_recorded(trace::Trace& trace, const RecordedIteration& recorded) {
  InternalScope internal;
  RunState& r = make_run_state();
  std::lock_guard<std::mutex> lock(r.mu);
  load_api(r);
  return adopt(r, prepare(r, trace, recorded, /*background=*/false));
}

TraceWriter::Before run_prepare_in_background(const RecordedIteration& recorded) {
  InternalScope internal;
  RunState& r = make_run_state();
  CUcontext context = nullptr;  // the program's now, where the window was recorded
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (load_api(r)) r.api.ctx_get_current(&context);
    ++r.preparing;
  }
  const std::uint64_t handed = now_ns();
  return [&r, recorded, handed, context](trace::Trace& trace, double build_ms, const std::optional<std::string>& build_error) {
    InternalScope internal;
    Prepared p;
    try {
      CUcontext current = nullptr;  // at exit this runs on the program's own thread: leave it be
      if (build_error) {
        p = refused(recorded, "its trace could not be built (" + *build_error + ")");  // an empty trace would plan nothing
      } else if (r.api_missing->empty() && (r.api.ctx_get_current(&current) != CUDA_SUCCESS || current != context) &&
          r.api.ctx_set_current(context) != CUDA_SUCCESS) {
        p = refused(recorded, "nimble's thread could not make the program's CUDA context current to build its graphs");
      } else {
        p = prepare(r, trace, recorded, /*background=*/true);
      }
    } catch (const std::exception& e) {
      p = refused(recorded, e.what());
    }
    p.in_background = true;
    p.handed_ns = handed;
    p.trace_ms = build_ms;
    p.ready_ns = now_ns();
    std::lock_guard<std::mutex> lock(r.mu);
    r.ready = std::move(p);
    --r.preparing;
    g_recording_ready.store(true, std::memory_order_release);
  };
}

std::optional<bool> run_adopt_ready() {
  RunState* r = run_state();
  if (!r) return std::nullopt;
  std::lock_guard<std::mutex> lock(r->mu);
  g_recording_ready.store(false, std::memory_order_relaxed);
  if (!r->ready) return std::nullopt;  // another thread came first
  InternalScope internal;
  Prepared p = std::move(*r->ready);
  r->ready.reset();
  try {
    return adopt(*r, std::move(p));
  } catch (const std::exception& e) {
    stop_replay(e);
    release_frees(*r);
    return false;
  }
}

std::optional<replayer::SideExitWindow> run_take_side_exit() {
  std::optional<replayer::SideExitWindow> out;
  out.swap(t_side_exit);
  return out;
}

// A session that never recorded anything writes the same summary, with the automatic range's words.
void run_nothing_recorded(const std::string& why) {
  RunState* r = run_state();
  std::unique_lock<std::mutex> lock;
  if (r) {
    lock = std::unique_lock<std::mutex>(r->mu);
    if (recorded_anything(*r)) return;  // its summary says the rest
  }
  const std::string path = run_output_path(config(), trace_output_path());
  std::error_code ignored;
  if (std::filesystem::exists(path, ignored)) return;
  // The session that rested between looks knows the calls it saw; otherwise an empty one.
  const replayer::RunSession nothing(replayer::RunOptions{}, &cuda_knows_address, &now_ns);
  const trace::json summary =
      replayer::nothing_recorded_json(r ? *r->session : nothing, trace_output_path(), why, hook_counts(), heuristics_counts());
  if (auto error = trace::write_file_atomically(path, trace::pretty_json(summary) + "\n")) {
    say("could not write " + path + ": " + *error);
  }
}

bool run_knows_period(std::uint64_t fingerprint) {
  RunState* r = run_state();
  if (!r) return false;
  std::lock_guard<std::mutex> lock(r->mu);
  return r->session->knows(fingerprint);
}

bool run_begins_a_recording(std::uint64_t signature) {
  RunState* r = run_state();
  return r && r->session->begins_a_recording(signature);
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

std::size_t run_rest_looking(std::size_t tasks) {
  InternalScope internal;
  RunState& r = make_run_state();  // (nothing may be recorded yet: the session counts the calls of the rest)
  std::lock_guard<std::mutex> lock(r.mu);
  const std::size_t rest = r.session->rest_looking(tasks);
  // The wrappers take nimble run's fast path, which counts the calls and asks for the next look.
  g_running.store(keep_running(r), std::memory_order_relaxed);
  return running() ? rest : 0;
}

std::size_t run_look_rests() {
  RunState* r = run_state();
  if (!r) return 0;
  std::lock_guard<std::mutex> lock(r->mu);
  return r->session->look_rests();
}

KnownOnly run_known_only(bool long_in_it) {
  RunState* r = run_state();
  if (!r) return KnownOnly::StopLooking;
  std::lock_guard<std::mutex> lock(r->mu);
  // A recording is being made ready, waits to be added, or is live (it may begin, rest, ask).
  if (r->ready || r->preparing) return KnownOnly::StopLooking;
  if (any_live(*r)) {
    r->session->looked_and_found_only_known();  // the next such look waits twice as long
    return KnownOnly::StopLooking;
  }
  if (!long_in_it) return KnownOnly::LookOn;
  // Nothing live: no iteration can complete or go stale, so no look is asked for again.
  g_running.store(false, std::memory_order_relaxed);
  return KnownOnly::StopForGood;
}

bool run_concerns(std::uint64_t signature) {
  const RunState* r = run_state();
  return r && r->session->concerns(signature);
}

bool run_engaged() {
  const RunState* r = run_state();
  return r && r->session->engaged();
}

void run_host_synchronized() {
  if (RunState* r = run_state()) r->session->host_synchronized();
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
  release_dropped(*r);
  idle_if_done(*r);  // (a trial that dropped its recording)
  return program_runs;
}

void run_pause(const char* why) {
  RunState* r = run_state();
  if (!r) return;
  std::lock_guard<std::mutex> lock(r->mu);
  InternalScope internal;
  // What is held goes out first: until then the wrappers must keep taking the lock, or another
  // thread's next call could reach its stream before the held calls before it.
  try {
    r->session->interrupt(why);
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  g_running.store(false, std::memory_order_relaxed);
  g_plain_phase.store(false, std::memory_order_relaxed);
  release_frees(*r);
}

void run_resume() {
  RunState* r = run_state();
  if (!r) return;
  std::lock_guard<std::mutex> lock(r->mu);
  g_running.store(keep_running(*r), std::memory_order_relaxed);
}

void run_guard_tick(std::size_t program_calls, bool at_host_point) {
  RunState* state = run_state();
  if (!state) return;
  RunState& r = *state;
  std::lock_guard<std::mutex> lock(r.mu);
  InternalScope internal;
  replayer::RunSession& session = *r.session;
  // Running or paused as the guard left it: a window, an adoption or a drop changes that.
  const bool as_left = running() == !session.guard().paused();
  const bool quiet = as_left && !r.ready && r.preparing == 0 && !r.stepped_aside;
  // Paused, the automatic range must not be left watching (it would record paused calls).
  const bool may_pause = quiet && !tasks_matter();
  try {
    switch (session.guard_tick(program_calls, quiet, may_pause, at_host_point)) {
      case replayer::GuardAction::Pause:
        g_guard_paused.store(true, std::memory_order_relaxed);
        g_running.store(false, std::memory_order_relaxed);
        g_plain_phase.store(false, std::memory_order_relaxed);
        break;
      case replayer::GuardAction::Resume:
        g_running.store(keep_running(r), std::memory_order_relaxed);
        g_guard_paused.store(false, std::memory_order_relaxed);
        break;
      case replayer::GuardAction::StepAside:
        // For good: the wrappers go idle (nothing tracked any more; nimble's thread builds nothing).
        g_running.store(false, std::memory_order_relaxed);
        g_plain_phase.store(false, std::memory_order_relaxed);
        g_recording.store(false, std::memory_order_relaxed);
        g_guard_counting.store(false, std::memory_order_relaxed);
        g_guard_syncs.store(false, std::memory_order_relaxed);
        g_guard_paused.store(false, std::memory_order_relaxed);
        debug_message(session.guard().summary_text());
        break;
      case replayer::GuardAction::None:
        break;
    }
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  release_frees(r);
  g_guard_syncs.store(g_guard_counting.load(std::memory_order_relaxed) && session.guard().wants_host_syncs(program_calls),
                      std::memory_order_relaxed);
}

bool short_circuit_takes(CUstream stream, StreamVariant variant, std::uint64_t signature, replayer::GpuCall* call) {
  t_side_exit.reset();
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
      session.on_unreplayed_task("issued a task nimble run does not replay");
    } else if (session.awaiting_iteration()) {
      // Whatever arms now is issued on this stream: graphs go there.
      if (handle != r.stream) {
        r.stream = handle;
        for (replayer::GraphExecutor* e : r.executors) e->set_stream(reinterpret_cast<CUstream>(handle));
      }
      deferred = session.on_call(signature, std::move(*call)) == replayer::Action::Deferred;
    } else if (handle != r.stream && !own_streams) {
      session.on_unreplayed_task("issued work on another stream");
    } else {
      deferred = session.on_call(signature, std::move(*call)) == replayer::Action::Deferred;
    }
    // Taken whatever became of the call (none may outlive it); used only when the program runs it.
    std::optional<replayer::SideExitWindow> window = session.take_side_exit_window();
    if (!deferred) t_side_exit = std::move(window);
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
  const std::optional<std::size_t> site = r.session->library_site(symbol);  // only inside a recorded iteration
  if (!site) return turn;
  replayer::Recording* active = r.session->active();
  InternalScope internal;
  turn.recording = r.session->index_of(*active);
  // While the automatic range looks for a period, every call runs: a skipped call launches
  // nothing the range can see, so it would find a period in the thinned sequence, and the window,
  // recorded with every call running, would hold only the first part of the iteration (the epochs
  // program's recordings of 284 and 375 of its step's 474 tasks).
  const replayer::LibraryDecision decision = active->memo->decide(*site, key, /*may_skip=*/!tasks_matter());
  if (!decision.skip) {
    turn.observe = true;
    turn.site = *site;
    turn.key = key;
    turn.started = active->short_circuit->iterations_started();
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
  const std::optional<replayer::OpPatches> patches =
      succeeded ? replayer::whole_call_launches(rec, turn.site, turn.started) : std::nullopt;
  rec.memo->observed(turn.site, turn.key, patches, host_ns);
}

namespace {

// What is held back goes out first (or the iteration falls back) when `because`, asked under the
// session's lock, names why; null: nothing to do.
template <class Because>
void held_calls_go_out_if(Because&& because) {
  RunState* state = run_state();
  if (!state || !state->session->engaged()) return;  // nothing can be held back
  RunState& r = *state;
  std::lock_guard<std::mutex> lock(r.mu);
  if (!running()) return;
  InternalScope internal;
  const char* what = because(r);
  if (!what) return;
  try {
    r.session->on_host_visible_point(what);
  } catch (const std::exception& e) {
    stop_replay(e);
  }
  publish(r);
}

}  // namespace

void short_circuit_host_visible(const char* what) {
  held_calls_go_out_if([what](const RunState&) { return what; });
}

void short_circuit_side_call(CUstream stream, StreamVariant variant) {
  held_calls_go_out_if([&](const RunState& r) -> const char* {
    const std::uint64_t handle = map_stream(stream, variant);
    const replayer::Recording* active = r.session->active();
    const bool own_streams = active && r.own_streams[r.session->index_of(*active)];
    const bool shares = own_streams || handle == r.stream || handle == deps::kLegacyStream ||
                        r.stream == deps::kLegacyStream || handle == deps::kPerThreadStream;
    return shares ? "issued work from another thread on the replayed iteration's stream" : nullptr;
  });
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

namespace {

// A count the session keeps, for the program to ask (0 when nimble run is not on).
template <class Count>
unsigned long long session_count(Count count) {
  RunState* r = run_state();
  if (!r) return 0;
  std::lock_guard<std::mutex> lock(r->mu);
  return count(*r->session);
}

}  // namespace
}  // namespace nimble::hooks

// For programs and tools that want to know how much of their work nimble run replays (the corpus
// counts replayed steps with it): the iterations replayed whole so far in this process, over every
// recording; 0 when nimble run is not on. Look it up with dlsym; it is not in the program's headers.
extern "C" __attribute__((visibility("default"))) unsigned long long nimble_run_iterations_replayed() {
  return nimble::hooks::session_count([](const nimble::replayer::RunSession& s) { return s.replayed_so_far(); });
}

// The segments of recorded work nimble run has launched so far (graphs, or the ops of one), every
// recording's, an iteration that fell back part way included: whether any replayed work has reached
// the GPU yet (process_pairs.py tells a result nimble may have changed from one it cannot have by it).
extern "C" __attribute__((visibility("default"))) unsigned long long nimble_run_segments_launched() {
  return nimble::hooks::session_count([](const nimble::replayer::RunSession& s) { return s.segments_launched(); });
}
