// Whether nimble run, as a whole, makes the program faster. A trial judges one recording's
// iterations against the program's own; nothing judges what nimble run costs the rest of the
// program: the steps no recording holds, false starts, the state it keeps. (An inference service
// whose batches come in three lengths read 0.91-0.95 of plain with every trial saying 1.04-1.16x.)
//
// Once something replays, the guard times the program itself: spans with nimble run paused (state
// tracked, nothing matched or replayed) alternate with spans running, each timed per program call
// (the program makes the same calls either way) from one host sync to another, so that what a span
// queued on the GPU is done inside it; a running span is timed only after an iteration replayed to
// warm up again. Pauses of the program only add time (a GC, another process's turn), so each side's
// lower median span is compared. Judging begins once replay has run GuardOptions::lead times the
// calls the paused spans will take. When running does not beat paused by
// GuardOptions::keep_above, nimble run steps aside for good (the wrappers go idle, which costs less
// than paused); when it does, it runs on and is judged again much later. CUDA-free: the hooks count
// the calls, ask tick() every so many of them and at host syncs while wants_host_syncs(), and act on
// what it answers.
// A program that never waits for the GPU between two iterations is never judged.
//
// On by default (NIMBLE_RUN_GUARD, 4 spans of each kind); paused is not idle (about 1% dearer), so
// running must beat paused by GuardOptions::keep_above (docs/replay.md, "the process guard").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nimble::replayer {

struct GuardOptions {
  // Timed spans of each kind before a verdict (0: no guard). A verdict comes sooner when the first
  // two of each kind are clear (quick_keep).
  std::size_t spans = 4;
  // Program calls a span lasts at least (longer for long iterations): the service's steps are about
  // 100 of the guard's calls, and its whole run 200 steps.
  std::size_t span_calls = 256;
  // Running is kept when paused / running medians reach this. Above 1: paused costs about 1% more
  // than the idle library nimble run goes to when it steps aside.
  double keep_above = 1.01;
  // After two spans of each kind, every paused one this much slower than every running one: kept.
  double quick_keep = 1.08;
  // Program calls from a verdict to keep until the next judgement, times the judgements so far.
  std::size_t rejudge_calls = 1u << 18;
  // Judging begins once replay has run this many times the calls its paused spans take (spans x a
  // span's calls): a short run is not judged at all, a long one pays its paused spans once, a
  // small share (CuPy's 7-call step on the H200: judged from its first replayed steps, a 320-step
  // run was paused for a third of them).
  std::size_t lead = 4;
  // The longest gap between two host syncs the guard learns (program calls). A paused span lasts
  // until a host sync for up to twice the longest gap seen, so programs that wait for the GPU only
  // every few steps, or whose live recording is a small piece of a step, are timed too (a GRU
  // seq2seq whose 24-call piece replayed synced every 2,500 calls: every paused span was cut at
  // 1,024 calls, untimed, and the guard never judged it).
  std::size_t longest_sync_gap = 1u << 16;
};

enum class GuardAction { None, Pause, Resume, StepAside };

// What the hooks know at a tick (RunSession::guard_tick fills in the session's part).
struct GuardView {
  std::size_t calls = 0;       // program calls so far (counted paused or not)
  std::uint64_t ns = 0;        // now, monotonic
  bool replaying = false;      // something is trusted and has replayed: there is something to judge
  bool settled = false;        // nothing is being recorded or built, nor on trial (a span now is fair)
  bool can_switch = false;     // nothing under way (nor looked for or built): nimble run may pause here
  // The program just waited for the GPU (a step's end, most often): spans begin and end only here
  // (a paused one also so that nimble run meets the next step at its first call rather than in its
  // middle; it resumes untimed after four spans' worth of calls, or twice the longest gap between
  // host syncs seen, without one).
  bool at_host_point = false;
  std::size_t longest_iteration = 0;  // calls of the longest live recording's iteration
};

class ProcessGuard {
 public:
  enum class State { Waiting, Judging, Kept, SteppedAside };

  explicit ProcessGuard(GuardOptions options) : options_(options) {}

  // Every so many program calls, and at host syncs while wants_host_syncs(). Returns what the hooks
  // do now: pause nimble run (Pause), let it run again (Resume), or leave the program alone for good
  // (StepAside: nothing it holds back may be left, can_switch was true).
  GuardAction tick(const GuardView& view);
  bool paused() const { return paused_; }
  // Whether tick() wants to see the program's host syncs now (`calls` program calls so far): while
  // judging, or once a judgement is due (until then the hooks need not take the lock at each sync).
  bool wants_host_syncs(std::size_t calls) const;
  State state() const { return state_; }
  // Judgements so far and the last one's ratio (paused / running medians), if any.
  std::size_t judgements() const { return judgements_; }
  std::optional<double> last_ratio() const { return last_ratio_; }
  std::size_t verdict_at() const { return verdict_at_; }  // program calls at the last verdict (0: none)
  bool undecided() const { return undecided_; }
  // Nanoseconds per call of the timed spans of the judgement under way, or the last one.
  const std::vector<double>& paused_spans() const { return paused_ns_; }
  const std::vector<double>& running_spans() const { return running_ns_; }
  std::size_t spoiled_spans() const { return spoiled_; }
  std::size_t sync_gap() const { return sync_gap_; }  // the longest gap between host syncs seen, in calls
  const GuardOptions& options() const { return options_; }
  // One line for the exit summary ("" when the guard never judged).
  std::string summary_text() const;

 private:
  GuardAction begin_span(const GuardView& view, bool paused);
  GuardAction end_span(const GuardView& view);
  GuardAction verdict(const GuardView& view);
  std::size_t span_length(const GuardView& view) const;
  // Replay has run the lead (GuardOptions::lead times spans of `span` calls) by `calls`.
  bool led(std::size_t calls, std::size_t span) const;
  // A host sync the guard saw at `calls`: learns the gap since the last one.
  void saw_host_sync(std::size_t calls);

  GuardOptions options_;
  State state_ = State::Waiting;
  bool paused_ = false;
  bool spoiled_now_ = false;  // the span under way met an unsettled moment
  bool warming_ = false;      // a running span's first iteration after resuming, not timed
  std::optional<std::size_t> replaying_since_;  // program calls when something first replayed
  std::size_t span_calls_at_ = 0;
  std::uint64_t span_ns_at_ = 0;
  std::vector<double> paused_ns_, running_ns_;
  std::size_t spoiled_ = 0;
  std::size_t judgements_ = 0;
  std::size_t judge_again_at_ = 0;  // program calls (Kept)
  std::optional<double> last_ratio_;
  std::size_t verdict_at_ = 0;
  bool undecided_ = false;  // the last judgement timed too few spans (too many were spoiled)
  std::optional<std::size_t> last_host_sync_;  // program calls at the last host sync seen (while syncs are watched)
  std::size_t sync_gap_ = 0;  // the longest gap between two of them (capped: GuardOptions::longest_sync_gap)
};

const char* guard_state_name(ProcessGuard::State state);

}  // namespace nimble::replayer
