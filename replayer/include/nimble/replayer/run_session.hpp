// The decisions of `nimble run` over a whole program, apart from the hooks that act on them. Like
// a tracing JIT: recorded iterations are the traces, the call-by-call check is the guard, a
// fall-back is a side exit. The session
//  * keeps several recordings (a training step, an eval step, a short last batch), a bounded
//    number, each with its own ShortCircuit and LibraryMemo; a call that may begin an iteration
//    is offered to each whose first call it could be;
//  * tries each new recording against the program's own calls before trusting it (alternating
//    blocks of replayed and plain iterations, timed in this process) and drops it when replay
//    does not pay; --compare N keeps alternating for good and only reports;
//  * drops a recording that keeps falling back or no longer shows up, and says why;
//  * notices when the program has moved on (many calls and no recorded iteration begun): the
//    hooks then look for, and record, the iteration the program runs now.
// The hooks' fast path asks concerns() without a lock: a call that cannot begin or continue a
// recorded iteration costs a few loads. CUDA-free: each recording launches through its Executor.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nimble/replayer/comparison.hpp"
#include "nimble/replayer/library_memo.hpp"
#include "nimble/replayer/process_guard.hpp"
#include "nimble/replayer/short_circuit.hpp"
#include "nimble/replayer/side_exits.hpp"
#include "settings/settings.hpp"

namespace nimble::replayer {

// The defaults of the options users set (NIMBLE_RUN_*) are the settings list's (settings.def).
struct RunOptions {
  // Live recordings at once (the least recently used one goes).
  std::size_t max_recordings = settings::defaults::run_recordings;
  // The payoff trial: blocks of this many iterations, replayed and plain in turn, timed in this
  // process; the recording is kept when replay was faster (0: trusted without a trial).
  std::size_t trial_block = settings::defaults::run_trial;
  double min_speedup = settings::defaults::run_min_speedup;  // below this (plain / replayed medians) a trial drops it
  // Trials that may not pay: one that did not rests (the program runs its iterations) and is
  // tried again, first after rest_iterations of its iterations' worth of calls, each later rest 8x
  // longer; the last trial that does not pay drops it (checks that still pay do not count). A
  // trial can be misled by a stretch of slow iterations on a shared machine, and a long program
  // should not lose its speedup to one.
  std::size_t trials = settings::defaults::run_trials;
  // (16: in every run seen on the H100 where a first trial did not pay, 7 of 7, the second did:
  // 1.02x -> 1.11x, 0.89x -> 1.23x, 0.87x -> 1.08x; a trial costs a few iterations, a rest of 64 cost a
  // 200-step program a third of its replay.)
  std::size_t rest_iterations = 16;
  // A trial that kept a recording only after more than one round (close to the minimum, or its
  // iterations spread) may have been misled the other way: it is tried again (a plain block first)
  // after this many replayed iterations, 8x more after each later such check (0: never).
  std::size_t recheck_iterations = settings::defaults::run_recheck;
  // One round decides a trial only when each phase's timed iterations add up to this much: three
  // iterations of half a millisecond meet the machine's swings in a way a longer round averages out
  // (torch.compile reduce-overhead on a shared H200: a 0.96x replay measured 1.30x in one round of
  // 0.6, 0.6, 0.5 ms plain against 0.5, 0.5, 0.4 replayed, and was kept for good). Shorter
  // iterations take two rounds at least, and a recording they keep is checked again later.
  double one_round_ms = 10.0;
  std::size_t compare_block = settings::defaults::run_compare;  // --compare N: alternate blocks for good, only report
  // A recording whose fall-backs and false starts reach this, and outnumber its replayed
  // iterations, is dropped.
  std::size_t failure_limit = 16;
  // Calls run eagerly since a recorded iteration last completed (or a measured plain one began)
  // before the program counts as having moved on (at least twice the longest recording's calls).
  std::size_t stale_calls = settings::defaults::run_stale;
  std::size_t give_up_after = 8;    // recordings dropped before the session stops looking
  // Looks asked for because the program left its recorded iterations (side exits), before it
  // has run stale_calls eagerly, that found nothing new; afterwards only staleness asks.
  std::size_t side_exit_looks = settings::defaults::run_side_exit_looks;
  // An exit taken three times alike (a trusted recording left at the same call, the stretch to the
  // next recorded iteration as long each time) gets a recording of that stretch, entered only there.
  bool side_exits = settings::defaults::run_side_exits;
  // A shorter stretch is left to the program (NIMBLE_RUN_SIDE_EXIT_SHORTEST).
  std::size_t side_exit_shortest = settings::defaults::run_side_exit_shortest;
  // A recording whose buffers move every iteration goes on to its trial (warmed_up_moving).
  bool trial_moving = settings::defaults::run_trial_moving;
  // The process guard (process_guard.hpp): spans paused and running, timed, once something replays.
  // Off under --compare, which alternates for good.
  GuardOptions guard{.spans = settings::defaults::run_guard};
};

// A call the automatic range should see before it looks again: the program left the recorded
// iterations on it (its signature, and whether it launched a kernel).
struct PrimerCall {
  std::uint64_t signature = 0;
  bool kernel = false;
};

// One recorded iteration as the hooks built it.
struct RecordingSetup {
  std::string name;                 // its trace file
  ReplayPlan plan;
  std::vector<Segment> segments;
  ArgumentRule rule = ArgumentRule::AnyBytes;
  std::uint64_t first_signature = 0;  // the hooks' signature of its first GPU call
  // The hooks' signatures of all its calls, in order (empty: unknown): a plain iteration of the
  // trial must follow them, or it is not this recording's.
  std::vector<std::uint64_t> call_signatures;
  // Calls the program issues between two iterations: RecordedIteration::calls_before_first and
  // the host reads at the ends left to the program (end_reads.hpp).
  std::size_t calls_before_first = 0;
  std::size_t end_reads = 0;          // of those, host reads (end_reads.hpp): any number may come between
  std::uint64_t fingerprint = 0;      // its period's (period_fingerprint), 0: none
  bool skip_library = true;           // remember library calls (LibraryMemo)
  LibraryMemoOptions library;         // the memo's, when skip_library
  // Recorded at an exit of another recording (SideExitWindow): replayed only from there.
  std::optional<ExitSite> side_exit;
  // Builds the executor over the recording's plan and segments, which stay where they are.
  std::function<std::unique_ptr<Executor>(const ReplayPlan&, const std::vector<Segment>&)> make_executor;
};

enum class RecordingState {
  Trial,      // replayed and plain blocks in turn until the payoff is known
  Replaying,  // trusted: every matching iteration is replayed
  Resting,    // its trial did not pay: the program runs its iterations until it is tried again
  Dropped,    // never armed again (why: Recording::dropped_because)
};
const char* state_name(RecordingState state);

// Where an iteration began: the session's call count and clock at its first call, and whether that
// call came right after a host point (RunSession::after_host_point).
struct IterationStart {
  std::size_t call = 0;
  std::uint64_t ns = 0;
  bool after_host_point = false;
};

struct Recording {
  std::string name;
  ReplayPlan plan;
  std::vector<Segment> segments;
  std::uint64_t first_signature = 0, fingerprint = 0;
  std::vector<std::uint64_t> call_signatures;  // RecordingSetup::call_signatures
  std::size_t calls_before_first = 0;          // RecordingSetup::calls_before_first
  std::size_t end_reads = 0;                   // RecordingSetup::end_reads
  // Its first call comes again inside its iteration, which ends with host reads: it begins an
  // iteration only right after a host sync or read, or another recorded iteration's end. Elsewhere
  // that call is the middle of a step (an inference service's fill kernel, 15 times a step: each
  // was a false start, held and handed back, in every step no recording replayed).
  bool begins_after_host_point = false;
  std::size_t calls = 0;            // GPU calls of one iteration (ops that launch something)
  std::unique_ptr<Executor> executor;
  std::unique_ptr<ShortCircuit> short_circuit;
  std::unique_ptr<LibraryMemo> memo;  // null: library calls always run
  std::unique_ptr<Comparison> comparison;  // the trial's or --compare's timings
  RecordingState state = RecordingState::Trial;
  std::string dropped_because;
  std::optional<double> trial_speedup;  // plain / replayed medians when the trial decided
  std::vector<double> earlier_trials;   // the speedups of the trials before this one (it rested after each)
  std::vector<std::unique_ptr<Comparison>> earlier_timings;  // and their timings
  std::string resting_because;          // why it rests (Resting)
  std::string last_rested_because;      // why it rested the last time (kept once it is tried again)
  std::size_t rest_until = 0;           // the session's call count when a resting recording may be tried again
  std::size_t recheck_at = 0;           // replayed iterations after which a kept recording is tried again (0: never)
  std::size_t rechecks = 0;             // trials begun that way
  std::size_t last_begun = 0;       // the session's call count when it last began an iteration
  std::size_t completed_at = 0;     // the session's call count when its last iteration completed
  // Where its last iteration began (one that takes the calls over after another recording's false
  // start began where that one did).
  IterationStart began;
  bool began_timed = false;    // that iteration began in its trial's timings (not_its_iteration undoes it)
  bool began_counted = false;  // ... and in trial_iterations
  std::size_t warmup_left = 0;      // replayed iterations still to complete before the trial is timed
  // The executor's execs made and node writes so far (totals) when its last iteration began.
  IterationWork work_at_begin;
  std::size_t learning_untimed = 0; // replayed iterations left untimed because they made an exec
  // The fewest node writes of a warm-up iteration after the first (none yet: SIZE_MAX).
  std::size_t fewest_writes = static_cast<std::size_t>(-1);
  // Set when a warm-up found its buffers moving every iteration ("N of its M calls' nodes" rewritten
  // each time): a trial that does not pay drops it rather than resting it (warmed_up_moving).
  std::string buffers_move;
  // Its next plain block takes over its next iteration that has begun as its own (it matched more
  // calls than another recording that begins with the same call shares: calls_to_tell_apart).
  bool plain_at_next = false;
  bool plain_after_this = false;     // ... or begins after the iteration under way (one was launched)
  std::size_t plain_mismatches = 0;  // plain iterations in a row that turned out to be something else
  std::size_t plain_unlike = 0;      // plain iterations of this trial unlike the recording, no other's either
  std::size_t trial_iterations = 0;  // its iterations begun in this trial, either phase (RunSession::judge)
  std::size_t false_starts_taken_over = 0;  // false starts another recording took over: no failures
  // Mismatches before any graph of it launched (false starts, fall-backs), after it had replayed
  // whole iterations: the program ran an iteration no recording holds yet (a batch padded to
  // another length). No failures either.
  std::size_t switches_to_unrecorded = 0;
  // Mismatches before any graph launched (false starts, fall-backs) within one iteration's worth of
  // calls of the last one counted: one failure with it (its first call recurs inside the program's
  // steps, a fill kernel 15 times in each). mismatch_counted_at: the session's call count then.
  std::size_t mismatches_in_one_iteration = 0;
  std::size_t mismatch_counted_at = 0;
  std::size_t fallbacks_to_side_exits = 0;  // fall-backs whose iteration went on in a side exit's recording
  std::size_t missed_entries = 0;  // a side exit's: times its parent left there and its first call did not match
  std::int64_t rank = 0;            // offered in order of rank (completed: front, failed: back)
  // A side exit's recording: the stretch after `exit_of` (its parent left there), entered only when
  // its parent leaves there; trusted as its parent is (no trial of its own).
  std::optional<ExitSite> exit_of;
};

// What a library call at memo site `site` of `r` launched, when the call was whole: the iteration
// under way when it began (`started`: ShortCircuit::iterations_started then) still is, and
// exactly the site's ops matched during it. Nullopt otherwise (what LibraryMemo::observed takes).
std::optional<OpPatches> whole_call_launches(const Recording& r, std::size_t site, std::size_t started);

class RunSession {
 public:
  using Clock = std::function<std::uint64_t()>;  // nanoseconds, monotonic
  static constexpr std::size_t kMaxRecordings = 16;
  // Looks in a row whose rests grow (rest_looking): later ones rest as long as the last.
  static constexpr std::size_t kLongestLookRest = 8;

  RunSession(RunOptions options, IsDevicePointer is_device_pointer, Clock clock);

  // Adds a recording (its executor is built here); returns its index. When the live ones are at
  // max_recordings, the one that began an iteration least recently is dropped first.
  std::size_t add(RecordingSetup setup);
  // add() in two steps. build() makes the recording (its executor too) without touching the
  // session: it may run on another thread while the session serves the program (nimble run builds
  // graphs in the background). add() of what build() made then takes the lock's part.
  std::unique_ptr<Recording> build(RecordingSetup setup) const;
  std::size_t add(std::unique_ptr<Recording> recording);

  // Lock-free, for the hooks' fast path: whether a call with this signature concerns the
  // session (an iteration is under way, a measured plain block is, or it may begin one).
  bool concerns(std::uint64_t signature) const;
  // Lock-free: whether a live recording's iteration begins with a call of this signature (the
  // automatic range records another shape of the program's loop from there).
  bool begins_a_recording(std::uint64_t signature) const;
  // Lock-free: an iteration or a measured plain block is under way (anything may be held back).
  bool engaged() const { return engaged_.load(std::memory_order_relaxed); }
  // A call that did not concern the session ran eagerly. True once when the program counts as
  // having moved on (the hooks then look for a new iteration). Lock-free.
  bool passed_by();
  // Lock-free: the program waited for the GPU (a stream, an event, the device). The next call may
  // begin an iteration of a recording that begins only after a host point.
  void host_synchronized() { host_point_at_.store(calls_.load(std::memory_order_relaxed), std::memory_order_relaxed); }
  // True once each time a new recording becomes wanted (wants_recording), until a recording is
  // added, refused, or a recorded iteration completes again.
  bool take_request();
  // The calls the program ran when it left a trusted recording's iteration before any of its graphs
  // was launched (those that matched, and the one that did not): the automatic range, which was
  // not watching then, sees them first, so an eval pass that begins like the training step is
  // seen whole. Empty when the side exit was elsewhere.
  std::vector<PrimerCall> take_primer();
  // The window to record from the call just handed to on_call (which the program runs): the stretch
  // after an exit taken alike often enough (SideExits). Asked right after on_call; none otherwise.
  std::optional<SideExitWindow> take_side_exit_window();
  // A task nimble run does not replay (a kind it has no call for): counted like every call, and a
  // host-visible point for an iteration under way.
  void on_unreplayed_task(const std::string& what);

  // In a measured plain block, a call with this signature: true when it is the program's to run
  // (counted, nothing else to do); false when the block has ended, and the call goes to on_call.
  bool counts_plain(std::uint64_t signature);
  // A GPU call (under the hooks' lock). Deferred: the caller must not run it.
  Action on_call(std::uint64_t signature, GpuCall call);
  // The active recording's library call is skipped (ShortCircuit::on_skipped_call).
  void on_skipped_call(const std::vector<std::vector<ArgPatch>>& patches);
  void on_host_visible_point(const std::string& what);
  // Nimble records another iteration (its calls run eagerly): the iteration under way, and a
  // measured plain block, end here; recordings may arm again afterwards.
  void interrupt(const std::string& why);
  // Process exit, or replay must stop for good: deferred calls are issued, nothing arms again.
  void finish(const std::string& why);
  // The process guard's turn (process_guard.hpp): `program_calls`, the hooks' count of the program's
  // calls, paused or not; `hooks_quiet`: nothing of the hooks' is under way that would make a span
  // unfair (no window open, no recording being built, nimble run running or paused as the guard
  // left it; a look for an iteration is part of what running costs); `hooks_may_pause`: neither is
  // the automatic range watching; `at_host_point`: the program just waited for the GPU. What the
  // hooks do now: on Pause the session has let go of everything (interrupt), on StepAside it is
  // finished.
  GuardAction guard_tick(std::size_t program_calls, bool hooks_quiet, bool hooks_may_pause, bool at_host_point = false);
  const ProcessGuard& guard() const { return guard_; }

  // The recording in the middle of an iteration (armed), if any.
  Recording* active();
  // The site of the active recording's memo that a library call of `symbol` made now would be:
  // inside a recorded iteration, with the matcher at the site's first op. Nullopt otherwise.
  std::optional<std::size_t> library_site(const std::string& symbol);
  bool holding() const;

  // A stream-ordered free (cuMemFreeAsync) on the stream whose calls are held back: the held-back
  // calls may still use the memory, so the free waits for them. `release` runs the free. False:
  // nothing is held back, the caller frees now.
  bool hold_free(std::function<void()> release);
  // The held frees that need not wait any longer (nothing is held back now), in the order the
  // program issued them; the caller runs them. Call after every change of the session.
  std::vector<std::function<void()>> releasable_frees();
  std::size_t frees_held() const { return frees_held_; }  // how many were ever held
  // Dropped recordings whose executors still hold their graphs (Executor::release): the caller
  // releases them where no capture of the program's is open (destroying graphs and freeing memory
  // is no call to make into someone else's capture). Returns how many it released.
  bool release_pending() const { return !to_release_.empty(); }
  std::size_t release_dropped();
  // In a block of iterations the program issues itself (library calls then run as usual).
  bool plain_phase() const { return plain_owner_.has_value(); }
  // Nothing armed: the next matching call begins an iteration.
  bool awaiting_iteration() const { return !active_; }
  // No live recording, or the program has moved on: the hooks should record a new iteration
  // (not while looking rests: rest_looking).
  bool wants_recording() const;
  // The automatic range looked at `tasks` tasks and found no iteration that repeats (dynamic
  // shapes): no look is asked for during the next 3 x `tasks` calls, times the fruitless looks in
  // a row (at most kLongestLookRest of them), and the program's calls take the hooks' fast path. Looking
  // costs every call about a thousand instructions; resting bounds that to a few percent of the
  // calls, and a loop that begins while it rests is found at most that many calls late. Returns
  // the calls it rests.
  std::size_t rest_looking(std::size_t tasks);
  std::size_t look_rests() const { return look_rests_; }  // for the summary
  // A look asked for because the program ran stale_calls eagerly found only known periods, with a
  // recording live: the program runs work besides its recordings' iterations that nimble has seen
  // (a step around an inner loop recorded, the step dropped for moving buffers: a GRU seq2seq looked
  // 577 times, 0.94 of plain on the H200). Each such look doubles the eager calls before the next
  // (up to kLongestKnownOnlyBackoff doublings) until a new recording is added.
  void looked_and_found_only_known();
  std::size_t known_only_looks() const { return known_only_looks_; }  // for the summary
  static constexpr std::size_t kLongestKnownOnlyBackoff = 10;
  bool knows(std::uint64_t fingerprint) const;  // recorded before (live or dropped)
  // A live recording (no side exit) of exactly the calls `r` holds, in the same order from the
  // same first call: `r` would only split that one's iterations with it. Null when there is none.
  const Recording* same_calls_as(const Recording& r) const;
  // A period that was recorded but could not be replayed: not recorded again.
  void reject(std::uint64_t fingerprint);
  // A period recorded again whose calls a live recording holds (same_calls_as): not recorded
  // again either, and no failure (it counts toward no giving up).
  void pass_over(std::uint64_t fingerprint);
  bool gave_up() const { return dropped_ >= options_.give_up_after; }
  std::size_t calls_seen() const { return calls_.load(std::memory_order_relaxed); }

  const std::vector<std::unique_ptr<Recording>>& recordings() const { return recordings_; }
  std::size_t index_of(const Recording& r) const;  // in recordings()
  const RunOptions& options() const { return options_; }
  std::size_t iterations_replayed() const;
  std::size_t replayed_so_far() const;  // ShortCircuit::replayed_so_far over every recording
  // Segments with work launched so far, over every recording: replayed work on the GPU, an iteration
  // that fell back part way included.
  std::size_t segments_launched() const;
  std::string summary_text() const;
  // For a recording still on trial when the program ended (no --compare): why it never decided, in
  // one line (how many iterations each phase had timed, of how many it wanted); "" otherwise.
  std::string undecided_trial(const Recording& r) const;
  // For a side exit's recording: which recording it leaves and where, in words ("" otherwise).
  std::string side_exit_text(const Recording& r) const;

 private:
  void drop(Recording& r, const std::string& why);
  void rest_or_drop(Recording& r, const std::string& why);
  void wake_if_rested(Recording& r);
  // A kept recording whose trial was not clear at once, due its check: a trial again, plain first.
  bool recheck_if_due(Recording& r);  // true: it began
  // Its trial (from the start: `warmup` replayed iterations first) begins afresh; the last one's
  // result and timings go to the earlier ones.
  void begin_trial(Recording& r, std::size_t warmup);
  void stop_replaying(Recording& r, const std::string& reason);
  // Runs `step` on r's short-circuit; when issuing or launching fails there, r is dropped and
  // the error goes on to the hooks (which stop replay).
  template <class Step>
  auto dropping_on_failure(Recording& r, Step&& step) -> decltype(step()) {
    try {
      return step();
    } catch (const std::exception& e) {
      drop(r, std::string("issuing its held-back calls failed: ") + e.what());
      throw;
    }
  }
  void publish();
  void publish_recordings();
  void settle();
  void start_plain_block(Recording& r);
  // The execs made and nodes written since r's last iteration began (remembering now's counts).
  IterationWork work_since_last_start(Recording& r);
  void time_start(Recording& r, std::uint64_t ns, bool previous_whole, IterationWork work);
  void begin_timed(Recording& r, std::uint64_t ns, bool previous_whole, IterationWork work);
  void not_its_iteration(Recording& r);
  void count_mismatch(Recording& r);
  // Whether the call numbered `call` (calls_seen() once it is counted) comes right after a host point.
  bool follows_host_point(std::size_t call) const { return call == host_point_at_.load(std::memory_order_relaxed) + 1; }
  // The call being handled (counted already) comes right after a host point.
  bool after_host_point() const { return follows_host_point(calls_seen()); }
  bool may_begin_at(const Recording& r, std::size_t call) const {
    return !r.begins_after_host_point || follows_host_point(call);
  }
  bool may_begin_here(const Recording& r) const { return may_begin_at(r, calls_seen()); }
  void plain_block_or_wait(Recording& r);
  // At the end of each warm-up iteration: its node writes; at the warm-up's end, whether r's buffers
  // move from one iteration to the next (Recording::buffers_move). True when they do and r was
  // dropped (unless RunOptions::trial_moving).
  bool warmed_up_moving(Recording& r);
  bool shares_first_call(const Recording& r) const;
  // Whether a resting recording (not one of `tried`) begins with the calls `failed` matched, its
  // first `matched` ones, then one with signature `next`: the program ran that iteration.
  bool runs_anothers_iteration(const Recording& failed, std::size_t matched, std::uint64_t next,
                               const std::vector<const Recording*>& tried) const;
  bool verifies_plain(const Recording& r) const;
  std::size_t calls_to_tell_apart(const Recording& r) const;
  bool measuring(const Recording& r) const;  // a trial, or --compare: plain blocks alternate
  Action offer(std::uint64_t signature, GpuCall&& call);
  Action through(Recording& r, GpuCall&& call);
  Action after_false_start(Recording& failed, std::uint64_t signature, FalseStart fs);
  bool counted_plain(std::uint64_t signature, std::size_t call);
  void iteration_began(Recording& r, bool previous_whole);
  void judge(Recording& r);
  // Timed iterations of each phase before a verdict, given those so far.
  std::size_t trial_wants(const IterationTimes& plain, const IterationTimes& replayed) const;
  // The phases' timed iterations do not overlap, on the side of the minimum `speedup` is on.
  bool apart(const IterationTimes& plain, const IterationTimes& replayed, double speedup) const;
  // Neither phase's timed iterations spread by more than half again, and each adds up to one_round_ms.
  bool one_round_decides(const IterationTimes& plain, const IterationTimes& replayed) const;
  void left_loop(const Recording& r, std::vector<PrimerCall> primer = {});
  // `parent` was left at `site` by a call it did not take (the program runs it unless a recording
  // of that exit takes it: `spare`, a copy kept for it). Returns what becomes of the call.
  // `at_end`: its iteration had completed and the call began no other (an end exit: no look).
  Action exited(Recording& parent, const ExitSite& site, std::optional<GpuCall> spare, Action action,
                std::vector<PrimerCall> primer = {}, bool at_end = false);
  // `parent` left at `site` by another iteration that begins alike, not by a side trace of its own.
  bool begins_alike(const Recording& parent, const ExitSite& site) const;
  // The program went another way after `matched` of an iteration's `length` calls, early enough to
  // be another iteration that begins alike (begins_alike; a plain block's not_its_iteration).
  bool told_apart_early(const Recording& r, std::size_t matched, std::size_t length) const;
  // The calls of one of r's iterations as a plain block counts them, the host reads between two included.
  std::size_t plain_length(const Recording& r) const;
  // `call` after an iteration of r completed is a host read r leaves to the program (end_reads.hpp).
  bool reads_between(const Recording& r, const GpuCall& call) const;
  // The live side exit's recording of `parent` left after `after_calls` calls by a call with `signature`.
  Recording* side_exit_at(const Recording& parent, std::size_t after_calls, std::uint64_t signature);
  Recording* take_ended();  // ended_, no longer watched
  void iteration_began_at_call(const Recording& r);
  void after_failures(Recording& r);
  std::size_t stale_after() const;

  RunOptions options_;
  ProcessGuard guard_;
  std::vector<std::function<void()>> held_frees_;
  std::size_t frees_held_ = 0;
  std::vector<Executor*> to_release_;  // of dropped recordings (release_dropped)
  IsDevicePointer is_device_pointer_;
  Clock clock_;
  std::vector<std::unique_ptr<Recording>> recordings_;
  Recording* active_ = nullptr;
  std::size_t dropped_ = 0;
  std::int64_t rank_clock_ = 0;
  std::vector<std::uint64_t> known_;  // fingerprints of every recording, dropped ones too

  // A measured plain block: whose, and calls since its iteration began. The iteration that ends
  // the block is timed when the block ends (began_by_plain_block_: not again when it arms).
  std::optional<std::size_t> plain_owner_;
  std::size_t plain_calls_ = 0;
  bool began_by_plain_block_ = false;

  // Read by the hooks without the lock.
  std::atomic<bool> engaged_{false};
  std::array<std::atomic<std::uint64_t>, kMaxRecordings> first_signatures_{};
  // The call count from which each first signature concerns the session: a resting recording's
  // (its rest_until) is of no concern before its rest is over, 0 for the others. Without it, every
  // call sharing a resting recording's first signature took the checked path for the whole rest
  // (the host-cost probe, 200 launches of one kernel: 878 instructions a launch, 327 with it).
  std::array<std::atomic<std::size_t>, kMaxRecordings> begins_from_{};
  std::array<std::atomic<bool>, kMaxRecordings> after_host_point_only_{};  // Recording::begins_after_host_point
  // The call count at the last host sync or read, or recorded iteration's end: the call after it
  // (calls_ one more) comes right after a host point.
  std::atomic<std::size_t> host_point_at_{0};
  std::atomic<std::size_t> calls_{0};
  std::atomic<std::size_t> eager_since_begun_{0};
  std::atomic<std::size_t> stale_after_{1024};
  std::size_t known_only_looks_ = 0;  // in a row, since the last recording added (the backoff)
  std::atomic<bool> requested_{false};
  // rest_looking: no look is asked for before this call count.
  std::atomic<std::size_t> look_rest_until_{0};
  std::size_t fruitless_looks_ = 0;  // in a row, since the last recording was added
  std::size_t look_rests_ = 0;
  // A trusted recording's iteration was left and no other took over: look again without waiting
  // for staleness, at most side_exit_looks times between new recordings.
  std::atomic<bool> left_loop_{false};
  std::atomic<std::size_t> side_exit_looks_{0};
  std::vector<PrimerCall> primer_;
  SideExits side_exits_;
  std::optional<SideExitWindow> side_exit_window_;
  // The trusted recording whose iteration completed with the last call: the next call, if it begins
  // nothing, is an exit at its end (a short last batch after the training steps). Read lock-free
  // (concerns) as watching_end_: that call takes the slow path.
  Recording* ended_ = nullptr;
  std::atomic<bool> watching_end_{false};
  // While after_false_start feeds a recording the calls another let go: where that one began the
  // program's iteration.
  std::optional<IterationStart> taking_over_;
  std::atomic<std::size_t> live_{0};  // recordings not dropped
  std::atomic<bool> gave_up_{false};
};

}  // namespace nimble::replayer
