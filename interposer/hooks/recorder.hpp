// The recorder's shared state and the one path every intercepted task takes into the
// dependency engine: skip what the program captures into its own graphs, call the real
// function, and only if it succeeded describe the task (inside the capture window) and feed it.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "config.hpp"
#include "cupti.hpp"
#include "deps/engine.hpp"
#include "function_ref.hpp"
#include "hook_table.hpp"
#include "library_calls.hpp"
#include "nimble/replayer/short_circuit.hpp"
#include "run_mode.hpp"

namespace nimble::hooks {

// The wrappers' one branch: true from start-up while NIMBLE_MODE=record, until the trace is
// written (or in a forked child). Idle wrappers only test it and call through.
inline std::atomic<bool> g_recording{false};
inline bool recording() { return g_recording.load(std::memory_order_relaxed); }

// True while `nimble run` short-circuits later iterations (run_mode.hpp); wrappers then call
// their handlers too.
inline std::atomic<bool> g_running{false};
inline bool running() { return g_running.load(std::memory_order_relaxed); }
// True while nimble run's process guard has paused it for a timed span (run_mode.hpp): the wrappers
// still call their handlers, which only count the program's calls (record_task).
inline std::atomic<bool> g_guard_paused{false};
inline bool guard_paused() { return g_guard_paused.load(std::memory_order_relaxed); }

// Whether tasks matter right now: the window is open, or the automatic range is watching. When
// not, a task costs little more than when idle (allocations, streams and events are still
// tracked: they are state, not tasks).
inline std::atomic<bool> g_tasks_matter{false};
inline bool tasks_matter() { return g_tasks_matter.load(std::memory_order_relaxed); }
// What looking cost under nimble run (the summary's "looking"): calls shown to the automatic range,
// the host time that took, and how often nimble run asked it to look again.
inline std::atomic<std::size_t> g_calls_looked_at{0}, g_looks_again{0};
inline std::atomic<std::uint64_t> g_look_ns{0};

// nimble run (NIMBLE_RUN_SIDE_THREADS): set at start-up. A thread that has launched no kernel or
// graph yet is a side thread (JAX's transfer threads, which copy inputs and results in another
// order among the step's calls every step): its copies, memsets and host functions are the
// program's own, neither looked at, recorded nor matched; the program's events order them with
// the step.
inline std::atomic<bool> g_side_threads{false};
inline std::atomic<std::size_t> g_side_calls{0}, g_side_thread_count{0};  // for the summary
inline thread_local bool t_launched_work = false;
inline thread_local bool t_side_counted = false;
inline bool on_side_thread() { return g_side_threads.load(std::memory_order_relaxed) && !t_launched_work; }
inline bool from_side_thread(trace::TaskKind kind) {
  if (kind == trace::TaskKind::Kernel || kind == trace::TaskKind::Graph) t_launched_work = true;
  if (!on_side_thread() ||
      !(kind == trace::TaskKind::Memcpy || kind == trace::TaskKind::Memset || kind == trace::TaskKind::HostFunc)) {
    return false;
  }
  g_side_calls.fetch_add(1, std::memory_order_relaxed);
  if (!t_side_counted) {
    t_side_counted = true;
    g_side_thread_count.fetch_add(1, std::memory_order_relaxed);
  }
  return true;
}

const Config& config();
deps::Engine& engine();
deps::ThreadId current_thread();

// Stream 0 means the legacy stream, or the per-thread stream for _ptsz/_ptds variants.
deps::StreamHandle map_stream(CUstream stream, StreamVariant variant);

// nimble's own driver calls (names, CUPTI, flushes) run inside this scope and are not recorded.
// (Inline, as every wrapper asks: libnimble.so is preloaded, so its thread-locals are a load away.)
extern constinit thread_local int t_internal_depth;
class InternalScope {
 public:
  InternalScope() { ++t_internal_depth; }
  ~InternalScope() { --t_internal_depth; }
  InternalScope(const InternalScope&) = delete;
  InternalScope& operator=(const InternalScope&) = delete;
};
inline bool inside_nimble() { return t_internal_depth > 0; }

// The program's own stream capture (torch.cuda.graphs, XLA command buffers): calls on a stream
// that is being captured are passed through and not recorded.
void program_capture_began();
void program_capture_maybe_ended();
bool program_capturing(CUstream stream, StreamVariant variant);
// Whether any capture of the program's is open (begun and not yet ended), on any stream.
bool program_captures_open();

// What identifies one intercepted task.
struct TaskCall {
  const HookInfo& hook;
  CUstream stream;
  trace::TaskKind kind;
  std::uint64_t signature;   // for the automatic capture range
};

using Describe = FunctionRef<void(deps::TaskEvent&)>;

// Feeds a task that already ran successfully. `describe` fills accesses and fields; it is only
// called inside the capture window. `observed`: the capture control already saw the task
// (run_window_opens). Never throws.
void submit_task(const TaskCall& call, std::uint32_t correlation, Describe describe, bool observed = false);

// Under `nimble run` while the automatic range looks for another iteration: shows the task to it
// before the task runs. True when the recording window is open (it may open with this task):
// nimble run is then paused (run_pause) and the task is recorded like any other.
bool run_window_opens(const TaskCall& call);
// nimble run left the call just handed to short_circuit_takes to the program and wants the stretch
// from it recorded (a side exit taken alike often enough): the window opens with this call and nimble
// run pauses until the recording is added. True when it opened (the caller records the call).
bool run_side_exit_window_opens();
// nimble run asked for a new recording (g_watch_wanted): the automatic range looks again.
void run_watch_again();
// A recording made ready in the background (g_recording_ready) is added, and the capture control
// told what comes next (look again, or stop).
void run_recording_ready();

enum class SyncKind { Stream, Event, Context };
// A host synchronisation that completed: the host saw the named work finish. `polled`: a query
// that reported completion; how many of those a program makes depends on timing (XLA polls its
// streams), so the automatic range does not count them, while the window still records them.
void submit_sync(const HookInfo& hook, SyncKind kind, std::uint64_t handle, StreamVariant variant, bool polled = false);

class RecordingWindow;
// Runs `action` on the capture control under the recorder's lock (profiler and NVTX ranges).
void with_recording_window(FunctionRef<void(RecordingWindow&)> action);

// Whether to record at all right now (recording, not re-entered from nimble itself).
inline bool should_record() { return recording() && !inside_nimble(); }

// What a task is for `nimble run`'s check against the recording; nullopt: not something it
// replays (the short-circuit then makes sure nothing is pending, and the call runs).
struct NotReplayed {
  std::optional<replayer::GpuCall> operator()() const { return std::nullopt; }
};

// Runs `call`; records the task if it succeeded and the stream is not captured by the program.
// Under `nimble run`, hands the task (`as_gpu_call()`) to the short-circuit instead, which may
// take it (launched later, as part of a graph).
template <class Call, class DescribeFn, class AsGpuCall = NotReplayed>
CUresult record_task(const TaskCall& task, Call&& call, DescribeFn&& describe, AsGpuCall&& as_gpu_call = {}) {
  if (__builtin_expect(g_recording_ready.load(std::memory_order_acquire), 0) && !inside_nimble()) run_recording_ready();
  // A library's own launches are not the program's calls: replay skips the library call, and they
  // would be counted paused and not running (the library call counts, once: library_calls.cpp).
  if (__builtin_expect(g_guard_counting.load(std::memory_order_relaxed), 0) && !inside_nimble() && !current_library_call()) {
    guard_counts_call();
  }
  if (!inside_nimble() && __builtin_expect(from_side_thread(task.kind), 0)) {
    if (running()) short_circuit_side_call(task.stream, task.hook.stream);
    return call();
  }
  bool observed = false;
  if (running() && !inside_nimble() && !program_capturing(task.stream, task.hook.stream)) {
    observed = tasks_matter() && run_window_opens(task);
    if (!observed) {
      CUresult result = CUDA_SUCCESS;
      bool side_exit = false;
      if (task.kind == trace::TaskKind::HostFunc) {
        // The program's own, never matched and not counted as a call (JAX's transfer threads
        // launch theirs in another order every step): only what is held back goes out first.
        short_circuit_host_visible("launched a host function");
        result = call();
      } else if (in_plain_phase() && run_counts_plain(task.signature)) {
        result = call();  // a measured plain iteration: the program's own call
      } else if (!run_concerns(task.signature)) {
        run_passed_by();  // the fast path: nothing is under way and this call begins nothing
        result = call();
      } else {
        std::optional<replayer::GpuCall> gpu = as_gpu_call();
        if (short_circuit_takes(task.stream, task.hook.stream, task.signature, gpu ? &*gpu : nullptr)) {
          result = CUDA_SUCCESS;
        } else if (!(side_exit = run_side_exit_window_opens())) {
          result = call();
        }
      }
      if (!side_exit) {
        if (g_watch_wanted.load(std::memory_order_relaxed)) run_watch_again();
        return result;
      }
      // A side exit's window opened with this call: it is recorded below like any window's.
    }
  }
  if (!should_record() || !tasks_matter() || program_capturing(task.stream, task.hook.stream)) {
    return call();
  }
  cupti::clear_correlation();
  const CUresult result = call();
  if (result != CUDA_SUCCESS) return result;  // a failed call is not a task
  submit_task(task, cupti::take_correlation(), describe, observed);
  return result;
}

// Report a problem once per message on stderr ("nimble: ...").
void log_message(const std::string& message);
void debug_message(const std::string& message);  // only with NIMBLE_DEBUG=1

}  // namespace nimble::hooks
