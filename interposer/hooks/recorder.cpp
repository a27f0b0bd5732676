#include "recorder.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <mutex>
#include <set>

#include "recording_window.hpp"
#include "host_timing.hpp"
#include "library_calls.hpp"
#include "real_driver.hpp"
#include "signature.hpp"

namespace nimble::hooks {
namespace {

// Created once at load time and deliberately never destroyed: wrappers may run during exit.
struct RecorderState {
  Config config;
  std::mutex mu;
  deps::Engine* engine = nullptr;
  RecordingWindow* capture = nullptr;
};

RecorderState& state() {
  static RecorderState* s = new RecorderState();
  return *s;
}

// The automatic range sees a task (under the recorder's lock): where it came from, and its
// signature.
void show_to_window(RecorderState& s, const TaskCall& call, std::uint32_t correlation = 0) {
  const deps::ThreadId thread = current_thread();
  s.capture->note_issuer(map_stream(call.stream, call.hook.stream), thread);
  // The kinds whose calls nimble run checks against a recording (record_task's as_gpu_call): one
  // of them begins a replayed iteration; host functions and stream work are the program's own.
  const bool arms = call.kind == trace::TaskKind::Kernel || call.kind == trace::TaskKind::Memcpy ||
                    call.kind == trace::TaskKind::Memset || call.kind == trace::TaskKind::Graph;
  s.capture->before_task(call.signature, /*host_sync=*/false, /*kernel=*/call.kind == trace::TaskKind::Kernel,
                         thread, correlation, arms, /*watched=*/call.kind != trace::TaskKind::HostFunc);
}
// Shows the call to the window; one that did not open it was looked at (the summary's "looking").
// Returns whether the window is capturing. The host time is sampled: one call in kLookTimedEvery
// is timed and counts for as many (two clock reads were a tenth of a look's instructions).
constexpr std::size_t kLookTimedEvery = 16;
bool look_at(RecorderState& s, const TaskCall& call, std::uint32_t correlation = 0) {
  // Only nimble run's summary says what looking cost: no clock reads for nothing. (Under the
  // recorder's lock: the count and the sample agree.)
  const bool counted = config().run;
  const bool timed = counted && g_calls_looked_at.load(std::memory_order_relaxed) % kLookTimedEvery == 0;
  std::chrono::steady_clock::time_point start;
  if (timed) start = std::chrono::steady_clock::now();
  show_to_window(s, call, correlation);
  if (s.engine->capturing()) return true;
  if (!counted) return false;
  g_calls_looked_at.fetch_add(1, std::memory_order_relaxed);
  if (timed) {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    g_look_ns.fetch_add(kLookTimedEvery * static_cast<std::uint64_t>(ns.count()), std::memory_order_relaxed);
  }
  return false;
}
std::atomic<int> g_program_captures{0};

void disable_after_error(const char* what) {
  g_recording.store(false, std::memory_order_relaxed);
  log_message(std::string("recording stopped after an internal error: ") + what);
}

void at_process_exit() {
  if (!recording()) return;
  try {
    std::lock_guard<std::mutex> lock(state().mu);
    if (recording() && state().capture) state().capture->at_exit();
  } catch (...) {
    // Never let an exit-time problem reach the program.
  }
  g_recording.store(false, std::memory_order_relaxed);
}

void in_forked_child() {
  // The child must not record into, or write, the parent's trace, nor time spans of the parent's
  // process guard (its lock may have been held by a thread the child lacks).
  g_recording.store(false, std::memory_order_relaxed);
  g_guard_counting.store(false, std::memory_order_relaxed);
  g_guard_syncs.store(false, std::memory_order_relaxed);
  g_guard_paused.store(false, std::memory_order_relaxed);
}

__attribute__((constructor)) void initialise_recorder() {
  RecorderState& s = state();
  s.config = config_from_environment();
  for (const std::string& error : s.config.errors) log_message(error + "; not recording.");
  if (s.config.host_times) start_host_timing();
  if (!s.config.record) return;
  g_side_threads.store(s.config.run && s.config.run_side_threads, std::memory_order_relaxed);
  (void)this_process();  // the process's rank, read once while nothing else runs
  s.engine = new deps::Engine();
  s.engine->set_stream_order_policy(*deps::parse_stream_order_policy(s.config.dependencies));
  s.capture = new RecordingWindow(s.config);
  std::atexit(at_process_exit);
  pthread_atfork(nullptr, nullptr, in_forked_child);
  g_recording.store(true, std::memory_order_relaxed);
  debug_message("recording, capture range " + s.config.range_text + ", dependencies " + s.config.dependencies +
                ", output " + s.config.output);
}

}  // namespace

const Config& config() { return state().config; }

deps::Engine& engine() { return *state().engine; }

deps::ThreadId current_thread() {
  thread_local const deps::ThreadId tid = static_cast<deps::ThreadId>(syscall(SYS_gettid));
  return tid;
}

deps::StreamHandle map_stream(CUstream stream, StreamVariant variant) {
  const auto raw = reinterpret_cast<std::uintptr_t>(stream);
  if (raw == 0) {
    return variant == StreamVariant::PerThread ? deps::kPerThreadStream : deps::kLegacyStream;
  }
  if (raw == reinterpret_cast<std::uintptr_t>(CU_STREAM_LEGACY)) return deps::kLegacyStream;
  if (raw == reinterpret_cast<std::uintptr_t>(CU_STREAM_PER_THREAD)) return deps::kPerThreadStream;
  return raw;
}

constinit thread_local int t_internal_depth = 0;

void program_capture_began() { g_program_captures.fetch_add(1, std::memory_order_relaxed); }

void program_capture_maybe_ended() {
  int n = g_program_captures.load(std::memory_order_relaxed);
  while (n > 0 && !g_program_captures.compare_exchange_weak(n, n - 1)) {
  }
}

bool program_captures_open() { return g_program_captures.load(std::memory_order_acquire) > 0; }

bool program_capturing(CUstream stream, StreamVariant variant) {
  if (g_program_captures.load(std::memory_order_relaxed) == 0) return false;
  auto is_capturing = reinterpret_cast<PFN_cuStreamIsCapturing_v10000>(
      resolve_real(HookId::k_cuStreamIsCapturing));
  if (!is_capturing) return true;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const auto handle = reinterpret_cast<CUstream>(map_stream(stream, variant));
  // An error here (e.g. the legacy stream during a global-mode capture) means the call is
  // about to fail or be captured: either way it is not ours to record.
  if (is_capturing(handle, &status) != CUDA_SUCCESS) return true;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

void submit_task(const TaskCall& call, std::uint32_t correlation, Describe describe, bool observed) {
  if (!tasks_matter()) return;
  try {
    RecorderState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!recording()) return;
    if (!observed) look_at(s, call, correlation);
    if (s.engine->capturing()) {
      deps::TaskEvent event;
      event.kind = call.kind;
      event.stream = map_stream(call.stream, call.hook.stream);
      event.thread = current_thread();
      {
        InternalScope internal;
        describe(event);
      }
      event.detail["api"] = call.hook.symbol;
      const LibraryCall* library = current_library_call();
      event.detail["library_call"] = library ? trace::json(library->symbol) : trace::json(nullptr);
      if (library && library->id >= 0) event.detail["library_call_id"] = library->id;
      if (library && library->key) event.detail["library_key"] = trace::hex_address(*library->key);
      if (correlation) event.detail["correlation_id"] = correlation;
      s.engine->task(std::move(event));
    }
    s.capture->after_task();
  } catch (const std::exception& e) {
    disable_after_error(e.what());
  } catch (...) {
    disable_after_error("unknown exception");
  }
}

bool run_window_opens(const TaskCall& call) {
  bool open = false;
  try {
    RecorderState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!recording() || !tasks_matter()) return false;
    open = look_at(s, call);
  } catch (const std::exception& e) {
    disable_after_error(e.what());
    return false;
  }
  // Outside the recorder's lock (nimble run never takes it while holding its own).
  if (open) run_pause("nimble began recording another iteration");
  return open;
}

bool run_side_exit_window_opens() {
  const std::optional<replayer::SideExitWindow> window = run_take_side_exit();
  if (!window) return false;
  bool open = false;
  try {
    RecorderState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (recording() && s.capture) open = s.capture->record_side_exit(*window);
  } catch (const std::exception& e) {
    disable_after_error(e.what());
    return false;
  }
  // Outside the recorder's lock (nimble run never takes it while holding its own).
  if (open) run_pause("nimble began recording a side exit");
  return open;
}

void run_watch_again() {
  g_watch_wanted.store(false, std::memory_order_relaxed);
  if (run_gave_up()) return;
  g_looks_again.fetch_add(1, std::memory_order_relaxed);
  const auto primer = run_take_primer();  // under nimble run's lock, which is let go first
  with_recording_window([&](RecordingWindow& capture) { capture.watch_again(primer); });
}

void run_recording_ready() {
  // Not inside a capture of the program's: adding may build graphs on this thread, whose
  // allocations and captures would invalidate the program's graph. Its next call after the capture
  // adds it.
  if (program_captures_open()) return;
  const std::optional<bool> look_again = run_adopt_ready();
  if (!look_again) return;
  // What the window's close left to the adoption (RecordingWindow::close_window).
  if (config().range != CaptureRange::Auto) {
    g_recording.store(false, std::memory_order_relaxed);
  } else if (*look_again) {
    run_watch_again();
  } else if (run_gave_up()) {
    g_recording.store(false, std::memory_order_relaxed);
  }
}

void submit_sync(const HookInfo& hook, SyncKind kind, std::uint64_t handle,
                 StreamVariant variant, bool polled) {
  if (!tasks_matter()) return;
  try {
    RecorderState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!recording()) return;
    // Event handles come from pools and change between iterations; stream handles do not.
    const std::uint64_t sig = signature_of("sync", hash_string(hook.base),
                                           kind == SyncKind::Stream ? handle : 0);
    if (!polled) s.capture->before_task(sig, /*host_sync=*/true, /*kernel=*/false, current_thread());
    if (s.engine->capturing()) {
      const deps::ThreadId tid = current_thread();
      switch (kind) {
        case SyncKind::Stream:
          s.engine->host_synced_stream(map_stream(reinterpret_cast<CUstream>(handle), variant),
                                       tid, hook.symbol);
          break;
        case SyncKind::Event:
          s.engine->host_synced_event(handle, tid, hook.symbol);
          break;
        case SyncKind::Context:
          s.engine->host_synced_context(tid, hook.symbol);
          break;
      }
    }
    if (!polled) s.capture->after_task();
  } catch (const std::exception& e) {
    disable_after_error(e.what());
  } catch (...) {
    disable_after_error("unknown exception");
  }
}

void with_recording_window(FunctionRef<void(RecordingWindow&)> action) {
  try {
    RecorderState& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    if (!recording() || !s.capture) return;
    action(*s.capture);
  } catch (const std::exception& e) {
    disable_after_error(e.what());
  } catch (...) {
    disable_after_error("unknown exception");
  }
}

void log_message(const std::string& message) {
  static std::mutex mu;
  static auto* seen = new std::set<std::string>();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen->insert(message).second) return;
  }
  const std::string line = "nimble: " + message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void debug_message(const std::string& message) {
  if (!state().config.debug) return;
  // Stamped with CLOCK_MONOTONIC seconds, the clock Python's time.monotonic() reads, so a log lines
  // up with the program's own step times (tests/programs/corpus_common.py).
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "nimble[debug] %lld.%06ld: ", static_cast<long long>(now.tv_sec), now.tv_nsec / 1000);
  const std::string line = stamp + message + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace nimble::hooks
