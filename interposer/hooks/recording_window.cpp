#include "recording_window.hpp"
#include "run_mode.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "bench_hook.hpp"
#include "cupti.hpp"
#include "output.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"
#include "trace_writer.hpp"

namespace nimble::hooks {
namespace {
constexpr std::size_t kKnownPeriodsBeforeRest = 3;
// With nothing live, nimble run stops for good once its looks have found only known periods for
// this many tasks: longer than a loop inside a step (a GRU seq2seq's decoder, 1,032 calls), short
// enough to cost a program whose step was dropped a few milliseconds.
constexpr std::size_t kKnownStreakBeforeGivingUp = std::size_t{1} << 14;
// A loop shorter than NIMBLE_RUN_ITERATION_SHORTEST that goes on this many tasks is where the
// program stays (torch.cuda.graph's 7-call step): looking on costs about 900 instructions a call,
// resting about 350. Above most set-up loops (a fill, a copy and a sync per parameter).
constexpr std::size_t kShortLoopTasksBeforeRest = 4096;
// With this many host syncs seen and no period, the program ran many iterations (a training step
// reads its loss, an evaluation its outputs): running more would not help, iterations that differ
// would (BERT with dynamic padding: 129493 tasks, a sync each step, on the H200).
constexpr std::size_t kSyncsOfManyIterations = 100;
// Tasks without a period in the whole sequence before the busiest kernel thread is followed alone.
constexpr std::size_t kTasksBeforeLane = 1024;
constexpr std::size_t kThreadsCounted = 64;
}  // namespace

RecordingWindow::RecordingWindow(const Config& config) : config_(config) {
  if (config_.range == CaptureRange::Auto) {
    AutoRange::Options options;
    options.iteration = config_.iteration;
    if (config_.run) {
      options.known = [](std::uint64_t fingerprint) { return run_knows_period(fingerprint); };
      options.begins_a_recording = [](std::uint64_t signature) { return run_begins_a_recording(signature); };
    }
    options.remember_diverged = config_.run;
    if (config_.run) options.shortest = static_cast<std::size_t>(config_.run_iteration_shortest);
    auto_range_ = std::make_unique<AutoRange>(options);
    if (config_.debug) tail_.emplace();
    // nimble run matches later iterations call by call, which an interleaving that changes
    // defeats anyway: only recording looks at one thread's lane.
    if (!config_.run) lane_range_ = std::make_unique<AutoRange>(options);
  }
  g_tasks_matter.store(auto_range_ != nullptr, std::memory_order_relaxed);
}

void RecordingWindow::before_task(std::uint64_t signature, bool host_sync, bool kernel, std::uint64_t thread,
                                 std::uint32_t correlation, bool arms, bool watched) {
  if (!watched) {
    // Neither looked at nor counted (nimble run does not count them either); an open window
    // records it all the same. Issued where the period found begins (a host function right after
    // the sync that ended the last one), it opens the window, as it began the iteration.
    if (!side_exit_ && auto_range_ && !finished_ && !open_ && deciding().begins_next()) open_window(correlation, false);
    return;
  }
  if (side_exit_) {  // counted to its end, not looked at
    note_window_call(signature, host_sync, arms);
    if (open_ && !host_sync && window_calls_.size() == side_exit_->calls) close_after_task_ = true;
    return;
  }
  if (!auto_range_ || finished_) {
    note_window_call(signature, host_sync, arms);
    return;
  }
  // The stream note_issuer saw for this call (a host sync has none).
  if (tail_) tail_->push(signature, kernel, host_sync, thread, host_sync ? ~0ull : last_issuer_.first);
  AutoRange::Action action = AutoRange::Action::None;
  if (!lane_mode_) {
    const AutoRange::Phase before = auto_range_->phase();
    const std::size_t short_loop = auto_range_->short_loop();
    action = auto_range_->on_task(signature, host_sync, kernel);
    if (before == AutoRange::Phase::Detecting && auto_range_->phase() != AutoRange::Phase::Detecting) {
      debug_message("automatic range: a period of " + std::to_string(auto_range_->period()) + " tasks was found");
    }
    if (auto_range_->short_loop() != short_loop) {
      debug_message("automatic range: a loop of " + std::to_string(auto_range_->short_loop()) +
                    " tasks passed over (shorter than NIMBLE_RUN_ITERATION_SHORTEST)");
    }
  }
  if (lane_range_ && (lane_mode_ || auto_range_->phase() == AutoRange::Phase::Detecting)) {
    action = lane_task(signature, host_sync, kernel, thread);
  }
  switch (action) {
    case AutoRange::Action::BeginBefore:
    case AutoRange::Action::BeginBeforeEndAfter:
      // The window's first task was already issued: count it as CUPTI saw it. (Following a
      // lane, another thread's task may have opened it just before.)
      if (!open_) open_window(correlation, kernel);
      close_after_task_ = action == AutoRange::Action::BeginBeforeEndAfter;
      break;
    case AutoRange::Action::EndAfter:
      close_after_task_ = true;
      break;
    case AutoRange::Action::None:
      break;
  }
  note_window_call(signature, host_sync, arms);
  if (config_.run && windows_written_ > 0 && auto_range_->known_in_a_row() >= kKnownPeriodsBeforeRest) {
    // nimble run looked again and keeps finding what it recorded before (and dropped, or
    // refused): stop looking until nimble run asks again; with nothing live it never will, and
    // the wrappers take the idle path (once the program has stayed in that loop long enough for
    // it not to be a loop inside a step).
    const KnownOnly verdict = run_known_only(auto_range_->known_streak() >= kKnownStreakBeforeGivingUp);
    if (verdict != KnownOnly::LookOn) {
      finished_ = true;
      g_tasks_matter.store(false, std::memory_order_relaxed);
      if (verdict == KnownOnly::StopForGood) {
        g_recording.store(false, std::memory_order_relaxed);
        debug_message("nimble run: only known iterations found and none is live; stopped for good");
      } else {
        debug_message("nimble run: only known iterations found; stopped looking");
      }
      return;
    }
  }
  if (rest_if_fruitless()) return;
  // A period was found: the window opens with one of the next tasks, which is issued before
  // nimble knows it is the first. CUPTI must already be listening then. Not under nimble run: a
  // candidate that does not hold (a decode step whose shapes grow) would leave CUPTI attached,
  // slowing every launch by a sixth while nimble looks on (HF generate, H100); it attaches when the
  // window opens instead, after the window's first task.
  if (!open_ && !config_.run && deciding().phase() != AutoRange::Phase::Detecting && !cupti_running_ &&
      windows_written_ == 0) {
    start_cupti();
  }
}

// nimble run: a look that found nothing repeating in NIMBLE_RUN_LOOK tasks (shapes that follow
// the data), or only a short loop the program stays in, rests, and the wrappers take nimble run's
// fast path until it asks for another look.
bool RecordingWindow::rest_if_fruitless() {
  if (!config_.run || config_.run_look <= 0 || open_ || auto_range_->phase() != AutoRange::Phase::Detecting) return false;
  const std::size_t looked = auto_range_->tasks_seen() - look_began_;
  const bool in_short_loop = auto_range_->short_loop_tasks() >= kShortLoopTasksBeforeRest;
  if (looked < static_cast<std::size_t>(config_.run_look) && !in_short_loop) return false;
  const std::size_t rest = run_rest_looking(looked);
  if (rest == 0) return false;
  finished_ = true;
  g_tasks_matter.store(false, std::memory_order_relaxed);
  debug_message("nimble run: " +
                (in_short_loop ? "only a loop of " + std::to_string(auto_range_->short_loop()) + " tasks repeated"
                               : std::string("nothing repeated")) +
                " in the last " + std::to_string(looked) + " tasks; looking rests for " + std::to_string(rest) + " calls");
  return true;
}

AutoRange::Action RecordingWindow::lane_task(std::uint64_t signature, bool host_sync, bool kernel,
                                             std::uint64_t thread) {
  if (!lane_) {
    if (kernel && (kernels_by_thread_.count(thread) || kernels_by_thread_.size() < kThreadsCounted)) {
      ++kernels_by_thread_[thread];
    }
    if (auto_range_->tasks_seen() < lane_after_tasks_ + kTasksBeforeLane || kernels_by_thread_.size() < 2) {
      return AutoRange::Action::None;
    }
    lane_ = std::max_element(kernels_by_thread_.begin(), kernels_by_thread_.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; })->first;
    debug_message("automatic range: no period in the whole sequence; following the thread that launched the most "
                  "kernels");
  }
  if (thread != *lane_ && !host_sync) {
    // Another thread's task right after the period's start (a host sync) belongs to the
    // iteration recorded next.
    if (lane_mode_ && !open_ && lane_range_->begins_next()) return AutoRange::Action::BeginBefore;
    return AutoRange::Action::None;
  }
  const AutoRange::Action action = lane_range_->on_task(signature, host_sync, kernel);
  if (!lane_mode_ && lane_range_->phase() != AutoRange::Phase::Detecting) {
    lane_mode_ = true;
    debug_message("automatic range: a period of " + std::to_string(lane_range_->period()) +
                  " tasks was found in one thread's lane");
  }
  return action;
}

void RecordingWindow::note_window_call(std::uint64_t signature, bool host_sync, bool arms) {
  if (!open_ || host_sync) return;
  // A window opening on a host function (JAX's, after the sync) is armed by the first call after it.
  if (!first_arming_call_ && arms) first_arming_call_ = window_calls_.size();
  window_calls_.push_back(signature);
}

void RecordingWindow::note_issuer(std::uint64_t stream, std::uint64_t thread) {
  if (!auto_range_ || finished_ || windows_written_ > 0) return;
  constexpr std::size_t kMostKept = 64;
  // Most calls come from the issuer of the one before: no set to search then.
  if (stream == last_issuer_.first && thread == last_issuer_.second) return;
  last_issuer_ = {stream, thread};
  if (streams_seen_.size() < kMostKept) streams_seen_.insert(stream);
  if (threads_seen_.size() < kMostKept) threads_seen_.insert(thread);
}

void RecordingWindow::after_task() {
  if (!close_after_task_) return;
  close_after_task_ = false;
  if (side_exit_) {
    close_window("side exit's stretch complete", false, false);
    return;
  }
  // `nimble record` and `bench` write one trace: a window whose tasks did not repeat the period
  // found is likely warm-up work (XLA's autotuning repeats a pattern, then moves on), so it is
  // dropped and the range looks again, CUPTI still attached (its counts restart with the next
  // window). nimble run replays, checks and re-records on its own.
  if (!config_.run && windows_written_ == 0 && deciding().diverged() && windows_discarded_ < kDivergedWindowsDropped) {
    engine().end_window();
    open_ = false;
    ++windows_discarded_;
    dropped_auto_ = auto_report();
    log_message("the recorded stretch did not repeat the period found (" + std::to_string(deciding().period()) +
                " tasks, window " + std::to_string(windows_discarded_) +
                "): likely warm-up work such as autotuning; looking for the iteration again");
    // Both ranges start over, and a lane is chosen afresh after as many tasks as at start-up.
    auto_range_->restart();
    if (lane_range_) lane_range_->restart();
    lane_mode_ = false;
    lane_.reset();
    kernels_by_thread_.clear();
    lane_after_tasks_ = auto_range_->tasks_seen();
    return;
  }
  // nimble run: a window that did not repeat the period found (DivergedWindows).
  if (config_.run && diverged_windows_.let_go(deciding(), run_knows_period)) {
    engine().end_window();
    open_ = false;
    debug_message("nimble run: the recorded stretch did not repeat the period found (" +
                  std::to_string(deciding().period()) + " tasks); let go, looking on");
    auto_range_->restart();
    run_resume();
    return;
  }
  close_window("period complete", false, false);
}

trace::json RecordingWindow::auto_report() {
  AutoRange& range = deciding();
  trace::json report = {{"period", range.period()},
                        {"anchored_at_host_sync", range.anchored_at_sync()},
                        {"matched_expected_period", !range.diverged()},
                        {"detections", range.detections()},
                        {"first_task_index", range.window_start()}};
  // Following one thread: the period counts its tasks and the host syncs; the window also holds
  // the other threads' tasks issued meanwhile.
  if (lane_mode_) report["followed_one_thread"] = true;
  // One step of several between the program's syncs (it reads results every N steps).
  if (range.sync_period()) report["one_block_of_sync_period"] = range.sync_period();
  if (windows_discarded_) report["windows_dropped_for_not_repeating"] = windows_discarded_;
  return report;
}

void RecordingWindow::profiler_start() {
  if (config_.range != CaptureRange::ProfilerApi || open_ || finished_) return;
  range_started_ = std::chrono::steady_clock::now();
  range_running_ = true;
  if (++ranges_seen_ == config_.iteration) open_window();
}

void RecordingWindow::profiler_stop() {
  if (config_.range != CaptureRange::ProfilerApi) return;
  if (!open_) {
    if (range_running_ && !finished_) {
      const std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - range_started_;
      unrecorded_range_ms_.push_back(ms.count());
    }
    range_running_ = false;
    return;
  }
  close_window("cuProfilerStop", false, false);
}

std::optional<double> RecordingWindow::framework_iteration_ms() const {
  if (unrecorded_range_ms_.empty()) return std::nullopt;
  std::vector<double> v = unrecorded_range_ms_;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void RecordingWindow::nvtx_push(std::string_view name, std::uint64_t thread, int depth) {
  if (config_.range != CaptureRange::Nvtx || open_ || finished_) return;
  if (name != config_.nvtx_name) return;
  if (++ranges_seen_ == config_.iteration) {
    nvtx_window_thread_ = thread;
    nvtx_window_depth_ = depth;
    open_window();
  }
}

void RecordingWindow::nvtx_pop(std::uint64_t thread, int depth) {
  if (open_ && config_.range == CaptureRange::Nvtx && thread == nvtx_window_thread_ &&
      depth == nvtx_window_depth_) {
    close_window("NVTX range end", false, false);
  }
}

bool RecordingWindow::nvtx_start(std::string_view name) {
  if (config_.range != CaptureRange::Nvtx || open_ || finished_) return false;
  if (name != config_.nvtx_name) return false;
  if (++ranges_seen_ != config_.iteration) return false;
  nvtx_window_depth_ = -1;
  open_window();
  return true;
}

void RecordingWindow::nvtx_end_of_window() {
  if (open_ && config_.range == CaptureRange::Nvtx) close_window("NVTX range end", false, false);
}

void RecordingWindow::watch_again(const std::vector<std::pair<std::uint64_t, bool>>& primer) {
  if (!auto_range_ || open_ || !finished_) return;  // no automatic range, or already looking
  // The program has run its steady state already: the period right after the one found three
  // times is recorded (a short eval pass of four batches, found at the third, has one left).
  auto_range_->restart(1);
  auto_range_->prime(primer);
  look_began_ = auto_range_->tasks_seen();
  finished_ = false;
  g_tasks_matter.store(true, std::memory_order_relaxed);
  debug_message("nimble run: looking for another iteration");
}

bool RecordingWindow::record_side_exit(const replayer::SideExitWindow& window) {
  if (!config_.run || open_ || windows_written_ == 0 || window.calls == 0) return false;
  side_exit_ = window;
  open_window();
  debug_message("nimble run: recording the " + std::to_string(window.calls) + " calls after a side exit of " +
                window.of + " (after " + std::to_string(window.site.after_calls) + " of its calls)");
  return true;
}

void RecordingWindow::at_exit() {
  if (open_ && config_.run && windows_written_ > 0) {
    // A later recording of `nimble run` still open: nothing of it was used; the traces that
    // were written stay as they are.
    open_ = false;
    return;
  }
  if (windows_written_ > 0) return;
  if (open_) {
    close_window("process exit", true, true);
    return;
  }
  if (dropped_auto_) {
    // Windows were dropped for not repeating their period and nothing better came: the last
    // one, which the engine still holds, is written with that said (capture_text warns).
    close_window("period complete", false, true, true);
    return;
  }
  // Done, or a process that never used CUDA (resting between looks is not done: nothing was found).
  const std::size_t look_rests = config_.run ? run_look_rests() : 0;
  if ((finished_ && look_rests == 0) || !driver_in_use()) return;
  if (ranges_seen_ == 0) {
    std::string hint;
    switch (config_.range) {
      case CaptureRange::ProfilerApi:
        hint = "the program never called cudaProfilerStart/cuProfilerStart. Bracket one iteration "
               "with torch.cuda.profiler.start()/stop() (or cudaProfilerStart/Stop), or use "
               "NIMBLE_CAPTURE_RANGE=auto";
        break;
      case CaptureRange::Auto: {
        const std::size_t short_loop = auto_range_ ? auto_range_->short_loop() : 0;
        hint = "no repeating period" +
               (short_loop ? " of at least " + std::to_string(config_.run_iteration_shortest) + " calls" : std::string()) +
               " was found in " + std::to_string(auto_range_ ? auto_range_->tasks_seen() : 0) + " tasks";
        if (short_loop) {
          hint += " (a loop of " + std::to_string(short_loop) + " calls repeated: nimble run leaves loops shorter than "
                  "NIMBLE_RUN_ITERATION_SHORTEST to the program, as replaying so few calls saves less than it costs)";
        }
        if (look_rests > 0) {
          const std::size_t looks = look_rests + (finished_ ? 0 : 1);
          hint += " (nimble run looked " + std::to_string(looks) + " time(s) and rested in between, as " +
                  (short_loop ? "only that loop" : "nothing") + " repeated: NIMBLE_RUN_LOOK)";
        }
        if (streams_seen_.size() > 1 && !short_loop) {
          hint += " issued on " + std::to_string(streams_seen_.size()) + " streams from " +
                  std::to_string(threads_seen_.size()) + " thread(s) (when their order differs from one "
                  "iteration to the next, no period repeats exactly; nimble run replays iterations whose "
                  "calls come in the same order every time, leaving out those of threads that launched no "
                  "kernel, such as JAX's transfer threads)";
        }
        if (tail_ && tail_->size() > 0) {
          debug_message("automatic range: the last " + std::to_string(tail_->size()) +
                        " calls looked at (K kernel, Y host sync, T other task; the number tells alike calls "
                        "apart; @tNsM: thread N, stream M, numbered as they came): " + tail_->text());
        }
        // nimble run's summary: what was seen; more iterations help only a program that ran few.
        const std::size_t syncs = auto_range_ ? auto_range_->host_syncs_seen() : 0;
        const bool many_iterations = syncs >= kSyncsOfManyIterations;
        const std::string advice =
            many_iterations
                ? ". Its " + std::to_string(syncs) + " host syncs mark many iterations, yet no three in a row issued the "
                  "same calls with the same launch shapes: work whose shapes follow the data (dynamic padding, "
                  "detections after NMS) never repeats; padding to a few fixed lengths lets each be recorded"
                : ". Run more iterations: the detector needs three identical ones in a row";
        if (config_.run) run_nothing_recorded(hint + (streams_seen_.size() > 1 || short_loop ? "" : advice));
        if (!short_loop) {
          hint += many_iterations ? advice + "; or bracket one iteration with cudaProfilerStart/Stop"
                                  : ". Run more iterations, or bracket one with cudaProfilerStart/Stop";
        }
        break;
      }
      case CaptureRange::Nvtx:
        hint = "no NVTX range named \"" + config_.nvtx_name + "\" was seen" +
               (nvtx_injected_ ? std::string()
                               : std::string(" (NVTX never loaded nimble: set NVTX_INJECTION64_PATH "
                                             "to the path of libnimble.so, as `nimble record` does)"));
        break;
    }
    log_message("no trace written: " + hint + ".");
  } else {
    log_message("no trace written: only " + std::to_string(ranges_seen_) +
                " capture range(s) were seen and NIMBLE_ITERATION=" +
                std::to_string(config_.iteration) + ".");
  }
}

void RecordingWindow::start_cupti() {
  InternalScope internal;
  cupti_status_.clear();
  const bool wanted = config_.cupti && (!config_.run || config_.run_cupti);
  cupti_running_ = wanted && cupti::start(&cupti_status_);
  if (!config_.cupti) {
    cupti_status_ = "disabled by NIMBLE_CUPTI=0";
  } else if (!wanted) {
    cupti_status_ = "not attached by nimble run (NIMBLE_RUN_CUPTI=1 attaches it to the first recording)";
  }
}

void RecordingWindow::open_window(std::uint32_t first_correlation, bool first_is_kernel) {
  if (windows_written_ > 0) {
    // nimble run's later recordings: CUPTI was stopped with the first (its durations and
    // coverage are not needed to replay, and re-subscribing while the program runs is avoided).
    cupti_running_ = false;
    cupti_after_first_task_ = false;
    cupti_status_ = "not used for nimble run's later recordings";
  } else if (cupti_running_) {
    cupti::restart_counts(first_correlation, first_is_kernel);
    if (cupti_after_first_task_) {
      // Attached for a window nimble run let go; this one's first task was seen.
      cupti_after_first_task_ = false;
      cupti_status_.clear();
    }
  } else {
    start_cupti();
    cupti_after_first_task_ = cupti_running_ && config_.run && auto_range_;
    if (cupti_after_first_task_) {
      cupti_status_ = "attached when the window opened, after its first task (nimble run does not attach CUPTI while it "
                      "looks): that task has no duration and is not in cupti_kernels";
    }
  }
  first_arming_call_.reset();
  window_calls_.clear();
  {
    InternalScope internal;
    device_ = describe_device();
  }
  engine().begin_window();
  open_ = true;
  opened_at_ = std::chrono::steady_clock::now();
  g_tasks_matter.store(true, std::memory_order_relaxed);
  debug_message("capture window opened");
}

void RecordingWindow::close_window(const std::string& reason, bool truncated, bool at_exit, bool writing_dropped) {
  using Clock = std::chrono::steady_clock;
  const auto closing = Clock::now();  // the program waits from here on
  const std::optional<replayer::SideExitWindow> side_exit = std::exchange(side_exit_, std::nullopt);
  engine().end_window();
  open_ = false;
  finished_ = true;
  g_tasks_matter.store(false, std::memory_order_relaxed);
  if (cupti_running_) {
    InternalScope internal;
    cupti::stop(/*flush=*/!at_exit);
    if (at_exit) cupti_status_ = "no durations: the window was still open at process exit";
  }
  replayer::WindowClosing waited;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  waited.cupti_stop_ms = since(closing);

  WindowReport report;
  report.path = numbered_trace_path(trace_output_path(), windows_written_ + 1);
  report.range = config_.range_text;
  report.iteration = auto_range_ && !side_exit ? deciding().iteration() : config_.iteration;
  report.ended_by = reason;
  report.truncated = truncated;
  report.device = device_;
  report.cupti_used = cupti_running_;
  report.cupti_status = cupti_status_;
  report.cupti_after_first_task = cupti_after_first_task_;
  report.window_ms = std::chrono::duration<double, std::milli>(closing - opened_at_).count();
  waited.window_ms = report.window_ms;
  debug_message("capture window closed (" + reason + ") after " + std::to_string(report.window_ms) + " ms");
  if (side_exit) {
    report.side_exit = {{"of", side_exit->of}, {"after_calls", side_exit->site.after_calls}, {"calls", side_exit->calls}};
  } else if (auto_range_) {
    report.auto_range = writing_dropped ? *dropped_auto_ : auto_report();
  }
  // nimble run in the background: the program's first GPU call after the recording is ready adds
  // it (run_recording_ready), and only then may recording stop. The trace is built there too,
  // unless CUPTI's results are to be read into it.
  const bool added_later = config_.run && config_.run_background && !at_exit;
  const bool built_later = added_later && !report.cupti_used;
  const auto building = Clock::now();
  TraceWriter::Build build_later;
  trace::Trace trace;
  if (built_later) {
    build_later = build_recorded_trace_later(report);
  } else {
    trace = build_recorded_trace(report);
  }
  waited.trace_build_ms = since(building);
  waited.trace_built_in_background = built_later;
  ++windows_written_;
  // One trace per process, except that `nimble run` with the automatic range keeps tracking
  // allocations and streams, to record the iteration again when the program moves on.
  const bool may_record_again = config_.run && auto_range_ && !at_exit;
  if (!may_record_again && !added_later) g_recording.store(false, std::memory_order_relaxed);
  if (!config_.run || at_exit) {
    const auto writing = Clock::now();
    const bool written = write_recorded_trace(trace, report);
    waited.trace_write_ms = since(writing);
    // `nimble bench`: replay the iteration right away, while its memory is still the program's.
    if (written && config_.bench_iterations > 0 && !at_exit) {
      bench_recorded_iteration(std::move(trace), framework_iteration_ms());
    }
    return;
  }
  // `nimble run`: later iterations that match this one are launched as graphs. It plans from the
  // trace in memory, then the file is written while the program goes on; by default planning and
  // building the graphs happen on the writer's thread too, before the file is written.
  RecordedIteration recorded;
  recorded.path = report.path;
  recorded.first_signature = first_arming_call_ ? window_calls_[*first_arming_call_] : 0;
  recorded.fingerprint = auto_range_ && !side_exit ? DivergedWindows::fingerprint_of(deciding()) : 0;
  recorded.event_points = engine().event_points();
  // From the arming call on: the calls before it (host functions after the sync) come last, as
  // the program issues them before the next iteration's first call.
  recorded.call_signatures = window_calls_;
  if (first_arming_call_) {
    std::rotate(recorded.call_signatures.begin(),
                recorded.call_signatures.begin() + static_cast<std::ptrdiff_t>(*first_arming_call_),
                recorded.call_signatures.end());
    recorded.calls_before_first = *first_arming_call_;
  }
  if (side_exit) recorded.side_exit = side_exit->site;
  // An earlier recording's file still being written is waited for here, where the program waits
  // anyway, so that the wait is told.
  const auto writing = Clock::now();
  background_trace_writer().finish();
  waited.trace_write_ms = since(writing);
  waited.trace_written_in_background = true;
  recorded.closing = waited;
  if (added_later) {
    TraceWriter::Before prepare = run_prepare_in_background(recorded);
    if (built_later) {
      write_recorded_trace_in_background(std::move(build_later), report, std::move(prepare));
    } else {
      write_recorded_trace_in_background(std::move(trace), report, std::move(prepare));
    }
    return;
  }
  bool again = false;
  try {
    again = run_recorded(trace, recorded);
  } catch (...) {
    write_recorded_trace_in_background(std::move(trace), report);  // the file, whatever became of the plan
    throw;
  }
  write_recorded_trace_in_background(std::move(trace), report);
  if (again && may_record_again) watch_again();
  if (!again && may_record_again && run_gave_up()) g_recording.store(false, std::memory_order_relaxed);
}

}  // namespace nimble::hooks
