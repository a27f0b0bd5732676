// When the recording window opens and closes (NIMBLE_CAPTURE_RANGE): between cuProfilerStart and
// cuProfilerStop, around one automatically detected iteration, or around an NVTX range. Closing
// the window writes the trace. All methods run under the recorder's lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>
#include <string>
#include <string_view>

#include "config.hpp"
#include "nimble/replayer/side_exits.hpp"
#include "detector_tail.hpp"
#include "period_detector.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::hooks {

class RecordingWindow {
 public:
  explicit RecordingWindow(const Config& config);

  // Around every task and host sync, in issue order (the automatic range decides here). Tasks
  // arrive after their driver call returned: `correlation` is the call's CUPTI id (0: none).
  // `arms`: nimble run may begin a replayed iteration with this call (a kernel, copy, memset or
  // graph launch; not a host function or other work the program runs itself). `watched`: the
  // automatic range looks at it and the window counts it among its calls. Host functions are not:
  // nimble run never matches them (the program runs its own) and does not count them, and JAX's
  // transfer threads launch theirs in an order that changes every step, so a sequence with them
  // has no period (H200, 2026-11-28). An open window records them all the same.
  void before_task(std::uint64_t signature, bool host_sync, bool kernel, std::uint64_t thread,
                   std::uint32_t correlation = 0, bool arms = false, bool watched = true);
  void after_task();
  // Which stream and thread a task the automatic range watches came from: when no period is
  // found, the exit message says how many (several streams fed from several threads seldom
  // interleave alike twice, so their sequence does not repeat exactly).
  void note_issuer(std::uint64_t stream, std::uint64_t thread);

  void profiler_start();
  void profiler_stop();
  // NVTX ranges (NIMBLE_CAPTURE_RANGE=nvtx:NAME). Push/pop nest per thread; start/end do not.
  void nvtx_push(std::string_view name, std::uint64_t thread, int depth);
  void nvtx_pop(std::uint64_t thread, int depth);
  bool nvtx_start(std::string_view name);  // true if this range opened the window
  void nvtx_end_of_window();
  void nvtx_injected() { nvtx_injected_ = true; }

  // Process exit: an open window is written, marked truncated; nothing touches the driver.
  void at_exit();

  // `nimble run` wants the iteration the program runs now: the automatic range looks again from
  // scratch, passing over periods recorded before, after the tasks of `primer` (they ran before
  // it began to watch). No effect with other capture ranges, or while it is looking already.
  void watch_again(const std::vector<std::pair<std::uint64_t, bool>>& primer = {});
  // `nimble run` records a side exit's stretch: the window opens with the task submitted next (the
  // exit's call) and closes after `window.calls` tasks that are not host syncs (those inside are
  // recorded). The automatic range, looking or not, sees none of them. False when a window is open.
  bool record_side_exit(const replayer::SideExitWindow& window);

  bool window_open() const { return open_; }
  // Whether tasks outside the window matter (the automatic range watches every task).
  bool watches_every_task() const { return auto_range_ != nullptr && !finished_; }
  bool finished() const { return finished_; }

 private:
  void start_cupti();
  bool rest_if_fruitless();
  void note_window_call(std::uint64_t signature, bool host_sync, bool arms);
  AutoRange::Action lane_task(std::uint64_t signature, bool host_sync, bool kernel, std::uint64_t thread);
  AutoRange& deciding() { return lane_mode_ ? *lane_range_ : *auto_range_; }
  void open_window(std::uint32_t first_correlation = 0, bool first_is_kernel = false);
  void close_window(const std::string& reason, bool truncated, bool at_exit, bool writing_dropped = false);
  trace::json auto_report();  // the trace's capture.auto for the window now ending

  const Config& config_;
  std::unique_ptr<AutoRange> auto_range_;
  // Threads whose tasks interleave differently every iteration (JAX's transfer threads): when
  // the whole sequence shows no period for a while, `nimble record` also looks in the tasks of
  // the thread that launched the most kernels (and every host sync), and once that lane repeats,
  // it decides the window; other threads' tasks inside it are recorded as they come.
  std::unique_ptr<AutoRange> lane_range_;
  std::map<std::uint64_t, std::size_t> kernels_by_thread_;  // while detecting, at most 64 threads
  std::optional<std::uint64_t> lane_;  // the thread followed, once chosen
  bool lane_mode_ = false;             // lane_range_ found the period
  bool open_ = false;
  std::chrono::steady_clock::time_point opened_at_;  // what the window took: the iteration, every call described
  bool finished_ = false;
  bool close_after_task_ = false;
  // The open window records this side exit's stretch: it closes after window.calls of window_calls_.
  std::optional<replayer::SideExitWindow> side_exit_;
  int windows_written_ = 0;       // traces written (nimble run writes one per recording)
  // nimble run: tasks seen when the automatic range last began to look (NIMBLE_RUN_LOOK: a look
  // that finds nothing repeating in that many tasks rests; the session counts the rests).
  std::size_t look_began_ = 0;
  // `nimble record` and `bench`: windows of the automatic range whose tasks did not repeat the
  // period found (warm-up work such as autotuning), dropped to look again; the last allowed is written.
  int windows_discarded_ = 0;
  static constexpr int kDivergedWindowsDropped = 2;
  DivergedWindows diverged_windows_;  // nimble run: windows that did not repeat their period
  // The last dropped window's capture.auto fields: written at exit, with the tasks the engine
  // still holds, when nothing better was found (a trace that says so beats none).
  std::optional<trace::json> dropped_auto_;
  std::size_t lane_after_tasks_ = 0;  // the lane may be chosen once this many tasks were seen (restarts move it)
  // Where in window_calls_ the first call that arms is (before_task); the calls before it are host
  // functions. None yet: no such call in the window.
  std::optional<std::size_t> first_arming_call_;
  std::vector<std::uint64_t> window_calls_;           // the signatures of the window's calls, in order
  std::set<std::uint64_t> streams_seen_, threads_seen_;  // while detecting (note_issuer), at most 64 each
  std::optional<DetectorTail> tail_;  // NIMBLE_DEBUG=1: the last calls looked at, logged when none repeated
  std::pair<std::uint64_t, std::uint64_t> last_issuer_{~0ull, ~0ull};  // (stream, thread) of the last call noted
  int ranges_seen_ = 0;           // cuProfilerStart calls / NVTX ranges named NIMBLE's NAME
  std::uint64_t nvtx_window_thread_ = 0;  // the push that opened the window: its thread
  int nvtx_window_depth_ = -1;             // and its nesting depth
  bool nvtx_injected_ = false;             // NVTX called InitializeInjectionNvtx2
  std::string cupti_status_;
  bool cupti_running_ = false;
  bool cupti_after_first_task_ = false;  // attached when the window opened (nimble run)
  trace::json device_;            // taken when the window opened, while the driver is alive
  // The program's own iteration time, for `nimble bench`: wall time of the cudaProfilerApi
  // ranges before the recorded one (the program runs unrecorded then).
  std::chrono::steady_clock::time_point range_started_{};
  bool range_running_ = false;
  std::vector<double> unrecorded_range_ms_;
  std::optional<double> framework_iteration_ms() const;
};

}  // namespace nimble::hooks
