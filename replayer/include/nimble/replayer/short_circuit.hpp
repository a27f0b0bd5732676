// The decisions of the in-process short-circuit (`nimble run`), apart from the hooks that act on
// them. While armed, every GPU call of the program is checked against the recording
// (call_check.hpp) and, when it matches, deferred instead of run; each recorded segment (the ops
// between two host-visible points: syncs and copies to the host) is launched as soon as its
// last call has matched, with the patches its calls brought, so the GPU starts while the CPU is
// still issuing the rest of the iteration. On a mismatch the deferred calls of the unlaunched
// segment are issued as they were, in their order, then the mismatching call, and the program
// goes on eagerly until the recorded iteration starts again. CUDA-free: an Executor does the
// launching, so this is tested on a CPU.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "nimble/replayer/call_check.hpp"
#include "nimble/replayer/plan.hpp"

namespace nimble::replayer {

using GpuCall = std::variant<KernelCall, CopyCall, MemsetCall, GraphLaunchCall>;

// The call that does recorded op `op` with `patches` applied: how the ops of a skipped library
// call are issued when their segment falls back.
GpuCall recorded_call(const Op& op, const std::vector<ArgPatch>& patches);

// Op ranges [begin, end) of the plan, launched as one unit each. A copy between the host and the
// device is a segment of its own that the program runs itself once everything before it is on
// the GPU: its host end is this iteration's memory, with the program's own synchronisation
// (the host data is read, or the result is there, exactly when the program expects). Other
// segments end at a host-visible point (a sync) or at the end; with `max_ops` > 0, longer
// stretches are cut into pieces of that many ops, so the first piece starts on the GPU while
// the program still issues the later ones. A segment also ends at each of `breaks` (op
// positions: the program recorded or waited for an event there, so everything before must be on
// the GPU when it does).
struct Segment {
  std::size_t begin = 0, end = 0;
  bool program_runs = false;  // a host copy, a collective or a graph launch: matched, then run by the program's own call
};

std::vector<Segment> segments_of(const ReplayPlan& plan, std::size_t max_ops = 0,
                                 const std::vector<std::size_t>& breaks = {});
// Whether the segment holds an op that is not a Nop (a stretch of syncs, or of the program's graph's
// nodes, launches nothing).
bool has_work(const ReplayPlan& plan, const Segment& segment);

class Executor {
 public:
  virtual ~Executor() = default;
  // Launch the recorded ops of `segment` (its graph) with the matcher's patches
  // (IterationMatcher::patches()), on the program's stream. May throw: the short-circuit then
  // issues the segment's calls itself and stops replaying.
  virtual void launch_segment(std::size_t segment, const IterationMatcher& matched) = 0;
  // Issue one call of the program as it made it, which matched recorded op `op` (a deferred call
  // on fall-back).
  virtual void issue(std::size_t op, const GpuCall& call) = 0;
  // Graph execs instantiated so far: one made during an iteration (a new set of addresses) is a
  // one-off cost the trial does not take for what replay costs.
  virtual std::size_t execs_made() const { return 0; }
  // Parameters written into graph nodes so far: an iteration whose buffers moved since the last
  // one rewrites its nodes before their graphs launch.
  virtual std::size_t node_writes() const { return 0; }
  // Of those, the ones written for a segment's parameters that none of its recent launches had:
  // buffers at new addresses, not buffers rotating among a few sets (which more execs will hold).
  virtual std::size_t node_writes_for_new_parameters() const { return node_writes(); }
  // Its recording was dropped: what it holds on the device (graphs, execs, streams, stand-in
  // memory) goes back now; its counts stay for the summary. Nothing is launched or issued after.
  virtual void release() {}
};

enum class Action {
  Run,       // the caller runs the call itself (not armed, or after a fall-back)
  Deferred,  // matched: the caller must not run it (the short-circuit launches it)
};

struct ShortCircuitSummary {
  std::size_t iterations_replayed = 0;
  std::size_t segments_launched = 0;
  std::size_t calls_deferred = 0;
  std::size_t host_copies = 0;    // matched copies to or from the host, run by the program
  std::size_t collectives = 0;    // matched collective kernels, run by the program
  std::size_t program_graphs = 0;  // matched launches of the program's own graphs, run by the program
  // Calls matched the recording's first ops (held back, or host copies the program ran) and the
  // next did not, before any graph was launched: the same calls also begin something else. Not
  // counted among the fall-backs. (Without hand-back: only after the first call.)
  std::size_t false_starts = 0;
  std::size_t ops_of_skipped_calls = 0;  // ops taken from the memo of a skipped library call
  std::map<std::string, std::size_t> fallbacks;  // reason -> count
  std::size_t fallbacks_total = 0;               // their sum (read after every call)
  // Why the false starts no other recording took over stopped (a shape change at the second call
  // is one): reason -> count. Not failures, but what a user reads to learn why a step ran plain.
  std::map<std::string, std::size_t> false_start_reasons;
};

// The reason counted most often among the fall-backs and then the false starts ("" when none).
std::string most_frequent_failure(const ShortCircuitSummary& summary);

// A false start handed back (ShortCircuit::hand_back_false_starts): the calls that matched before
// any graph of the iteration was launched, and the next, which did not match. Another recording
// that begins alike may take them all.
struct FalseStart {
  struct Matched {
    std::size_t op = 0;   // the recorded op it matched
    GpuCall call;         // held back and not yet issued, unless ran
    bool ran = false;     // the op runs in the program (a host copy): the program ran it already
  };
  std::vector<Matched> matched;  // in the program's order
  GpuCall next;                  // the call that did not match; not run yet
  std::string mismatch;          // why it did not (IterationMatcher)
  // Only the first call matched: the same call begins something else (counted as a false start).
  // Otherwise, when no other recording takes the calls over, a fall-back.
  bool first_only() const { return matched.size() == 1; }
};

class ShortCircuit {
 public:
  ShortCircuit(const ReplayPlan& plan, std::vector<Segment> segments, IsDevicePointer is_device_pointer,
               Executor& executor, ArgumentRule rule = ArgumentRule::SameAddresses);

  // On a false start (a mismatch before any graph of the iteration was launched), keep the held
  // calls back instead of issuing them and leave the mismatching call unrun: take_false_start()
  // hands them to the caller, which must issue them (in order) unless another recording takes them.
  void hand_back_false_starts(bool on) { hand_back_ = on; }
  std::optional<FalseStart> take_false_start();
  // A false start handed back that no other recording took over and that was more than its first
  // call: counted as the fall-back it is, with its reason.
  void count_as_fall_back(const std::string& reason);
  // One that no other recording took over and that stays a false start: its reason is kept.
  void explain_false_start(const std::string& reason);
  bool handing_back() const { return handed_back_.has_value(); }
  // Calls matched in the iteration under way.
  std::size_t matched_in_iteration() const { return armed_ ? matched_ : 0; }
  // Whether matching the first `calls` calls of an iteration launches a graph (a segment of nimble's
  // ends within them): such a prefix cannot be handed back or taken over.
  bool launches_within(std::size_t calls) const;
  // The iteration under way becomes the program's own (the trial times it as a plain one): the
  // held-back calls are issued as the program made them, in order, and nothing is counted as a
  // fall-back. Only before any graph of the iteration was launched; false (nothing done) after.
  bool release();

  // A GPU call of the program. Arms itself when a call matches the recording's first op.
  Action on_call(GpuCall call);
  // A library call nimble skips (library_memo.hpp): the next patches.size() recorded ops are taken
  // as matched with these patches, as if the library had launched them. The caller made sure the
  // matcher is at the first op of that call's site.
  void on_skipped_call(const std::vector<std::vector<ArgPatch>>& patches);
  // The next op to match, while armed.
  std::size_t position() const { return matcher_.position(); }
  // The patches of the ops matched so far in this iteration.
  const std::vector<std::vector<ArgPatch>>& patches() const { return matcher_.patches(); }

  // The program is about to look at results or order work by the stream (a sync, an event record,
  // a host callback): whatever is deferred must be on the GPU first. At a recorded segment end this launches nothing new;
  // elsewhere it falls back.
  void on_host_visible_point(const std::string& what);
  // The program ends (or replay must stop for good): deferred calls are issued, nothing re-arms.
  void finish(const std::string& why);
  // After finish() (not after a failed launch): the next matching call may arm again (a recording
  // tried again after resting). False when a launch or issue failed: replay stays stopped.
  bool resume();
  // The iteration under way ends here (nimble records another one; its calls run eagerly):
  // deferred calls are issued, a complete iteration is counted, and the next call may arm again.
  void abandon(const std::string& why);

  bool armed() const { return armed_; }
  // Between iterations: the next call that matches starts one (not armed, or the armed
  // iteration is complete).
  bool awaiting_iteration() const { return !armed_ || matcher_.complete(); }
  bool stopped() const { return stopped_; }
  bool failed() const { return failed_; }  // a launch or issue failed: resume() cannot help
  // Calls are held back (their segment is not launched yet).
  bool holding() const { return !deferred_.empty(); }
  // How many times a call armed it (began a recorded iteration).
  std::size_t iterations_started() const { return iterations_started_; }
  const ShortCircuitSummary& summary() const { return summary_; }
  // Iterations replayed whole so far, the one that just completed included (the summary counts it
  // when the next call comes).
  std::size_t replayed_so_far() const { return summary_.iterations_replayed + (armed_ && matcher_.complete() ? 1 : 0); }
  std::string summary_text() const;

 private:
  CallCheck check(const GpuCall& call);
  Action try_arm(GpuCall&& call);
  Action accept(GpuCall&& call, std::size_t op);
  void fall_back(const std::string& reason, bool false_start = false);
  void count_fall_back(const std::string& reason);  // in fallbacks and fallbacks_total
  void issue_held_calls();
  void launch_ready_segments();

  const ReplayPlan& plan_;
  Executor& executor_;
  IterationMatcher matcher_;
  std::vector<Segment> segments_;
  std::size_t next_segment_ = 0;     // the first segment not launched in this iteration
  std::size_t launched_in_iteration_ = 0;  // graphs launched for it
  std::size_t matched_ = 0;          // calls matched in this iteration
  struct Deferred {
    std::size_t op;
    std::optional<GpuCall> call;  // none: an op of a skipped library call (recorded_call on fall-back)
  };
  std::vector<Deferred> deferred_;   // calls of the unlaunched segment, in order
  std::vector<Deferred> end_iteration();
  bool hand_back_ = false;
  // Calls of the iteration that ran in the program, kept while nothing was launched (hand-back only).
  std::vector<FalseStart::Matched> ran_;
  std::optional<FalseStart> handed_back_;
  bool armed_ = false;
  bool stopped_ = false;             // a launch failed, or finish(): never re-arm (but see resume())
  bool failed_ = false;              // a launch or issue failed: stopped for good
  std::size_t iterations_started_ = 0;
  ShortCircuitSummary summary_;
};

}  // namespace nimble::replayer
