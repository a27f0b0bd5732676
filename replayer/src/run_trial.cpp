// The trial of RunSession (run_session.hpp): a new recording's replayed iterations are timed
// against the program's own, block by block, and kept, rested or dropped on what they measured.
// Also --compare's timing, and the rechecks of a recording kept by an unclear trial.
#include <algorithm>
#include <cstdio>
#include <string>

#include "nimble/replayer/run_session.hpp"
#include "run_session_parts.hpp"

namespace nimble::replayer {

using namespace session_parts;

namespace {

// `first` iterations, 8x longer after each of `earlier` times, at most 2^30 (rests and checks;
// NIMBLE_RUN_TRIALS goes to 100).
std::size_t eightfold(std::size_t first, std::size_t earlier) {
  constexpr std::size_t kLongest = std::size_t{1} << 30;
  std::size_t n = std::min(first, kLongest);
  for (std::size_t i = 0; i < earlier; ++i) n = std::min(n * 8, kLongest);
  return n;
}

// The execs r's executor has made and the node parameters it has written, so far.
IterationWork executor_totals(const Recording& r) {
  if (!r.executor) return {};
  return {r.executor->execs_made(), r.executor->node_writes(), r.executor->node_writes_for_new_parameters()};
}

std::string speed_text(double plain_ms, double replayed_ms) {
  char text[160];
  std::snprintf(text, sizeof text, "%.3f ms plain, %.3f ms replayed: %.2fx", plain_ms, replayed_ms, plain_ms / replayed_ms);
  return text;
}

// Iterations of two kinds in one phase: its upper quartile more than twice its lower (HF generate
// on the H200, prompts of two lengths in turn: 164-172 and 490-499 ms, replayed and plain alike;
// the medians of six and nine such iterations read 1.47x, and the process ran at 0.96x of plain).
// A slow stretch or a one-off (an eval pass, a checkpoint) moves one quartile, not both apart.
bool two_kinds(const IterationTimes& t) {
  constexpr double kApart = 2.0;
  return t.p25_ms > 0 && t.p75_ms > kApart * t.p25_ms;
}

std::string spread_text(const IterationTimes& t) {
  char text[96];
  std::snprintf(text, sizeof text, "%zu iterations of %.1f-%.1f ms, quartiles %.1f and %.1f", t.iterations,
                t.fastest_ms, t.slowest_ms, t.p25_ms, t.p75_ms);
  return text;
}

}  // namespace

// A program whose buffers sit elsewhere in every iteration rewrites most of its graph nodes each
// time. Most training scripts do: zero_grad(set_to_none=True) between the forward and the backward
// pass frees the gradients while the activations live, so the backward pass puts them, and
// PyTorch's caching allocator everything after, at new offsets every step (every such program in
// the corpus drifts, none of the others; the allocator's own trace shows it: zero_grad there
// drifts, before the forward pass or after the step the blocks rotate among three sets,
// scripts/gpu/alloc_drift.py). Whether replay pays then depends on what the writes cost against
// what it saves, and the trial cannot yet tell (H200, 2026-11-29, each recording on trial, one pair
// each): timm training with EMA weights, a U-Net and a DCGAN replayed 90-96% of their steps at
// 1.08-1.20x of plain, while Lightning's trial measured 1.16x and its pair 0.95-0.99x, and HF
// generate (its KV cache grows: 2161 of 2620 nodes rewritten a call; 7-39 new execs a call, which
// its trial leaves untimed) read 0.96x with its trial undecided at exit (0.98-1.00x dropped after
// its warm-up). New execs in the warm-up do not tell them apart either (generate 62 for 258 graphs,
// timm 38 for 82). So when every warm-up iteration after the first (which writes whatever moved
// since the recording) rewrote more than half of its calls' nodes, counting only writes for
// parameters the segment had in none of its recent launches (a rotation among a few sets is no
// drift), the recording is dropped before a plain block or a timed one, unless
// NIMBLE_RUN_TRIAL_MOVING=1 lets the trial decide. Either way it is never rested for a later trial:
// no program measured stopped moving its buffers (generate, XLA, the DataLoader program: each
// rested twice and was dropped at its third), and while it rests nimble run stays on every call
// (generate: 0.96x of plain resting, 0.98-1.00x dropped; H200): a trial that does not pay drops it
// at once, unless an earlier one paid (rest_or_drop).
bool RunSession::warmed_up_moving(Recording& r) {
  if (r.warmup_left < options_.trial_block) {  // the writes of the iteration just completed (since it began)
    r.fewest_writes = std::min(r.fewest_writes, executor_totals(r).new_writes - r.work_at_begin.new_writes);
  }
  if (--r.warmup_left > 0 || r.fewest_writes == static_cast<std::size_t>(-1) || 2 * r.fewest_writes <= r.calls) {
    return false;
  }
  r.buffers_move = std::to_string(r.fewest_writes) + " of its " + std::to_string(r.calls) + " calls' nodes";
  if (options_.trial_moving) return false;
  drop(r, "replay rewrote most of its graph nodes in every iteration (at least " + r.buffers_move +
              " each time, to addresses none of its recent iterations had: its buffers move from one iteration to the "
              "next), which costs what replay saves (NIMBLE_RUN_TRIAL_MOVING=1 lets a trial decide)");
  return true;
}

// An iteration that instantiated a graph exec (addresses the recording's execs did not hold; BERT
// on the H100: two replayed iterations of 48 and 63 ms among ones of 15-26 ms, right after a plain
// block, dropped a 1.18x recording at 0.37x) is not timed: the trial weighs what replay costs from
// then on. Execs per graph are bounded, so such iterations end; past a block's worth, the ones
// left are timed as they are (a recording that never stops making execs pays for them).
void RunSession::iteration_began(Recording& r, bool previous_whole) {
  const IterationWork work = work_since_last_start(r);
  r.began_timed = r.began_counted = false;
  // (Trusted, without --compare: nothing more to time.)
  if (!r.comparison || !replays(r) || r.warmup_left > 0 || !measuring(r)) return;
  begin_timed(r, r.began.ns, previous_whole, work);
}

// r's iteration began at `ns`: the one before is timed if it was whole, and the trial may decide.
void RunSession::begin_timed(Recording& r, std::uint64_t ns, bool previous_whole, IterationWork work) {
  time_start(r, ns, previous_whole, work);
  r.began_timed = true;
  const std::size_t counted = r.trial_iterations;
  judge(r);
  r.began_counted = r.trial_iterations == counted + 1;
}

// r began an iteration at a call and let it go a few calls later, nothing of it launched: the
// program's iteration is another's (an inference service's batch of another length). It is no
// iteration of r's trial: neither timed nor counted among those begun.
void RunSession::not_its_iteration(Recording& r) {
  if (r.began_timed && r.comparison) r.comparison->not_begun();
  if (r.began_counted && r.trial_iterations > 0) --r.trial_iterations;
  r.began_timed = r.began_counted = false;
}

IterationWork RunSession::work_since_last_start(Recording& r) {
  const IterationWork now = executor_totals(r);
  const IterationWork work{now.execs - r.work_at_begin.execs, now.writes - r.work_at_begin.writes,
                          now.new_writes - r.work_at_begin.new_writes};
  r.work_at_begin = now;
  return work;
}

// An iteration of r began: the one before it is timed, with what replay did in it, unless it was
// not whole or made an exec (within the block's worth that goes untimed), whichever phase begins
// now (the last replayed iteration of a block ends where a plain block begins).
void RunSession::time_start(Recording& r, std::uint64_t ns, bool previous_whole, IterationWork work) {
  Comparison& c = *r.comparison;
  if (work.execs > 0 && previous_whole && r.learning_untimed < c.block()) {
    ++r.learning_untimed;
    previous_whole = false;
  }
  c.iteration_began(ns, previous_whole, work);
}

// The trial's verdict, once both phases have timed iterations, after the rounds trial_wants asks
// for (one for a clear result, two, or four near the minimum).
void RunSession::judge(Recording& r) {
  if (r.state != RecordingState::Trial || options_.compare_block > 0) return;
  const IterationTimes plain = r.comparison->times(Phase::Plain), replayed = r.comparison->times(Phase::Replay);
  const std::size_t round = trial_wants({}, {});  // one round at least, whatever the speed
  // Plain iterations that began as recorded, then went another way no other recording's does (JAX
  // on the H100: XLA's transfer threads put their copies among the step's calls in another order
  // each step; 24 replayed and 0 plain iterations timed by the program's end): the trial cannot
  // decide, so the recording rests as one that did not pay would (replay unproven is not kept).
  // Plain blocks cut short by another recording's iteration (an eval pass after training steps)
  // are no such evidence and are not counted.
  constexpr std::size_t kPlainIterationsUnlike = 8;
  if (plain.iterations == 0 && r.plain_unlike >= kPlainIterationsUnlike) {
    std::string why = "its trial could not time the program's own iterations (";
    why += std::to_string(r.plain_unlike);
    why += " of them began as recorded and went another way: the program's calls vary from one iteration to the next)";
    rest_or_drop(r, why);
    return;
  }
  // Iterations that never come two in a row between the program's other work (a one-step eval
  // pass that begins like the training step: each of its plain blocks is cut by the next training
  // step, and no replayed block follows) are never timed: after this many of them in the trial,
  // the recording rests as one that did not pay would, instead of staying on trial for good. So
  // does one whose plain iterations are timed but no replayed one (JAX in process pairs on the H200:
  // 120 plain and no replayed iteration timed, half of 800 steps replayed unproven). (A pass of two
  // or three steps times its replayed iterations but no plain one: it stays on trial, replayed in
  // part, as before.)
  constexpr std::size_t kTrialBlocksUntimed = 8;
  const std::size_t most_untimed = kTrialBlocksUntimed * std::max<std::size_t>(options_.trial_block, 1);
  if (++r.trial_iterations >= most_untimed && replayed.iterations == 0) {
    const std::string begun = std::to_string(r.trial_iterations) + " begun";
    rest_or_drop(r, plain.iterations == 0
                        ? "its trial could not time its iterations (" + begun +
                              ", none of them right after another of its own: a pass of one iteration between the "
                              "program's other work)"
                        : "its trial could not time its replayed iterations (" + begun + ", " +
                              std::to_string(plain.iterations) +
                              " of the program's own timed, but no replayed one right after another of its own: other "
                              "calls came between them)");
    return;
  }
  if (plain.iterations < round || replayed.iterations < round || replayed.median_ms <= 0) return;
  const double speedup = plain.median_ms / replayed.median_ms;
  const std::size_t wants = trial_wants(plain, replayed);
  if (plain.iterations < wants || replayed.iterations < wants) return;
  // (Two kinds spread a phase by more than half again, so no round of one decides: `wants` held
  // two rounds at least.)
  if (two_kinds(plain) && two_kinds(replayed)) {
    rest_or_drop(r, "its trial could not compare the program's iterations with replayed ones (" + spread_text(plain) +
                        " plain, " + spread_text(replayed) +
                        " replayed: iterations of two kinds, the program's work between them varies, and the medians "
                        "depend on how many of each kind a phase met)");
    return;
  }
  r.trial_speedup = speedup;
  r.plain_at_next = r.plain_after_this = false;  // decided: no more plain blocks
  if (speedup >= options_.min_speedup) {
    r.state = RecordingState::Replaying;
    if (wants > round && options_.recheck_iterations > 0) {  // not clear after one round: checked again later
      r.recheck_at = r.short_circuit->summary().iterations_replayed + eightfold(options_.recheck_iterations, r.rechecks);
    }
    return;
  }
  char minimum[32];
  std::snprintf(minimum, sizeof minimum, "%.2fx", options_.min_speedup);
  rest_or_drop(r, "replay did not pay in its trial (" + speed_text(plain.median_ms, replayed.median_ms) + ", below " + minimum + ")");
}

// A trial that did not pay: the recording rests while trials are left (the program runs its
// iterations; rest_iterations of them the first time, 8x more each later time), else it is dropped.
// Only trials that did not pay count: a recording kept by its trial and later checked (short
// iterations are checked at 256, 2048, ... replayed ones) is not dropped by the first check that
// meets a slow stretch.
void RunSession::rest_or_drop(Recording& r, const std::string& why) {
  // A drifting recording (warmed_up_moving: its buffers will move on) is not rested for another
  // trial, unless an earlier trial found that it paid: then this is a check meeting a slow stretch.
  const bool paid_before = std::any_of(r.earlier_trials.begin(), r.earlier_trials.end(),
                                       [&](double speedup) { return speedup >= options_.min_speedup; });
  if (!r.buffers_move.empty() && !paid_before) {
    drop(r, why + "; its buffers move from one iteration to the next (replay rewrote at least " + r.buffers_move +
                " each time, to addresses none of its recent iterations had), so it is not tried again");
    return;
  }
  std::size_t failed = 0;
  for (const double speedup : r.earlier_trials) failed += speedup < options_.min_speedup;  // (0: not timed)
  if (failed + 1 >= options_.trials || options_.rest_iterations == 0) {
    drop(r, why);
    return;
  }
  const std::size_t rest = eightfold(options_.rest_iterations, failed);
  r.state = RecordingState::Resting;
  r.resting_because = why + "; tried again after " + std::to_string(rest) + " of its iterations";
  r.last_rested_because = why;
  r.rest_until = calls_seen() + rest * std::max<std::size_t>(r.calls + r.end_reads, 1);  // (the program's calls per iteration)
  stop_replaying(r, "the recording rests until its next trial: " + why);
  // Its held-back calls could not be issued: replay has stopped for good, no trial can follow.
  if (r.short_circuit->failed()) drop(r, why + "; issuing its held-back calls then failed");
}

// A resting recording whose rest is over gets its next trial: replayed warm-up first, then blocks
// timed afresh (the program may have changed since: its first steps, other work on the machine).
void RunSession::wake_if_rested(Recording& r) {
  if (calls_seen() < r.rest_until || !r.short_circuit->resume()) return;
  r.resting_because.clear();
  r.completed_at = 0;
  r.rank = ++rank_clock_;
  begin_trial(r, options_.trial_block);
}

// Checked at the end of one of its replayed iterations: the next one is the program's own, timed
// (its graphs are warm: no replayed warm-up). A one-iteration eval pass with a trial of its own
// waits for the program to come back to it like any trial.
bool RunSession::recheck_if_due(Recording& r) {
  if (r.state != RecordingState::Replaying || r.recheck_at == 0 || !r.comparison || r.exit_of ||
      r.short_circuit->summary().iterations_replayed < r.recheck_at) {
    return false;
  }
  r.recheck_at = 0;
  ++r.rechecks;
  begin_trial(r, 0);
  plain_block_or_wait(r);
  return true;
}

void RunSession::begin_trial(Recording& r, std::size_t warmup) {
  r.earlier_trials.push_back(r.trial_speedup.value_or(0));  // 0: the trial timed nothing
  if (r.comparison) r.earlier_timings.push_back(std::move(r.comparison));
  r.trial_speedup.reset();
  r.state = RecordingState::Trial;
  r.comparison = std::make_unique<Comparison>(options_.trial_block);
  r.warmup_left = warmup;
  r.work_at_begin = executor_totals(r);
  r.learning_untimed = 0;
  r.fewest_writes = static_cast<std::size_t>(-1);
  r.plain_at_next = r.plain_after_this = false;
  r.plain_mismatches = 0;
  r.plain_unlike = 0;
  r.trial_iterations = 0;
}

// Whether one round's timings can decide (see trial_wants): neither phase's timed iterations
// spread by more than half again, and each phase's add up to RunOptions::one_round_ms.
bool RunSession::one_round_decides(const IterationTimes& plain, const IterationTimes& replayed) const {
  constexpr double kSteadySpread = 1.5;
  const auto fits = [&](const IterationTimes& t) {
    return t.slowest_ms <= kSteadySpread * t.fastest_ms &&
           t.median_ms * static_cast<double>(t.iterations) >= options_.one_round_ms;
  };
  return fits(plain) && fits(replayed);
}

// A clear result after one round of timed iterations (the first replayed ones still learn: graph
// variants, library calls), anything closer after two. Near the minimum, medians of six iterations
// decide by noise (GPT-2 forward, H100: 0.91x, 0.99x and 1.30x in three processes), so such a
// result waits for four rounds, but only from 0.99x (no slower than plain) or the minimum if lower: every
// replayed block of a slower replay costs the program (HF generate, H100: trials of 0.88x and 0.98x
// over four rounds made the process 0.87-0.94x of plain), so a slower one decides after two rounds,
// never after one: a stretch of host noise as long as a block falls in one replayed block and not
// in the plain one beside it (H200, one sweep: BERT 0.71x, gradient accumulation 0.78x and the
// epochs program 0.73x, each in one round, each 1.15-1.56x at its next trial; the epochs program's
// two misled trials rested its step for 128 iterations, 0.82x of plain for the process). Only a
// large ratio (1.25x or more faster) is clear after one round, and only when neither phase's
// iterations spread by more than half again: a program's own slow stretch (ResNet-18 with AMP,
// H100: three steps of 31-48 ms among ones of 13-17 ms, in plain runs too) that falls in a
// replayed block is not replay being slow; and only when each phase's
// timed iterations add up to one_round_ms (short iterations: two rounds, then a check later). (No
// timed iterations: one round, the least any verdict needs.)
std::size_t RunSession::trial_wants(const IterationTimes& plain, const IterationTimes& replayed) const {
  const std::size_t round = std::max<std::size_t>(1, options_.trial_block - 1);
  if (plain.iterations == 0 || replayed.iterations == 0 || replayed.median_ms <= 0) return round;
  const double speedup = plain.median_ms / replayed.median_ms;
  if (apart(plain, replayed, speedup)) return (speedup >= options_.min_speedup ? 1 : 2) * round;
  const bool one_round = one_round_decides(plain, replayed);
  const double slower = std::min(0.99, options_.min_speedup);  // below this, replay costs the program
  const bool clear = one_round && speedup >= 1.25;
  const bool near_minimum = speedup >= std::max(slower, options_.min_speedup / 1.1) && speedup < options_.min_speedup * 1.1;
  return (near_minimum ? 4 : clear ? 1 : 2) * round;
}

// Every timed replayed iteration faster than every plain one (or every one slower), on the side of
// the minimum the medians are on. With three or more of each, chance alone orders them so at most
// one time in twenty each way: as clear as a large ratio, so one round decides a faster replay (a
// trial's plain blocks are iterations the program is not sped up) and two rounds a slower one,
// however close to the minimum (a slow stretch can fill one replayed block: see trial_wants). Not
// when one round cannot decide
// (one_round_decides): a wait of the program's own in a plain block (torch.compile reduce-overhead
// on a shared H200: plain 0.8, 15.9 and 1.2 ms against replayed 0.7, 0.7 and 0.6) orders them so
// without replay being faster, and one round kept a 0.96x replay for 1800 iterations. Fewer
// samples, such a round or any overlap: the rounds of trial_wants.
bool RunSession::apart(const IterationTimes& plain, const IterationTimes& replayed, double speedup) const {
  constexpr std::size_t kFewestEach = 3;
  if (plain.iterations < kFewestEach || replayed.iterations < kFewestEach || !one_round_decides(plain, replayed)) return false;
  if (speedup >= options_.min_speedup) return replayed.slowest_ms < plain.fastest_ms;
  return replayed.fastest_ms > plain.slowest_ms;
}

std::string RunSession::undecided_trial(const Recording& r) const {
  if (r.state != RecordingState::Trial || !r.comparison || options_.compare_block > 0) return "";
  // Worded for every way a trial stays open (the program ended, moved on, or nimble stopped).
  if (r.warmup_left > 0) {
    return "its trial had not begun when the program ended (" + std::to_string(r.warmup_left) +
           " replayed iteration(s) of warm-up left before the timed blocks)";
  }
  const IterationTimes plain = r.comparison->times(Phase::Plain), replayed = r.comparison->times(Phase::Replay);
  const bool timed = plain.iterations > 0 && replayed.iterations > 0 && replayed.median_ms > 0;
  std::string text = "its trial had not decided when the program ended (" + std::to_string(replayed.iterations) +
                     " replayed and " + std::to_string(plain.iterations) + " plain iterations timed, of ";
  if (!timed) return text + "at least " + std::to_string(trial_wants({}, {})) + " each)";
  return text + std::to_string(trial_wants(plain, replayed)) + " each at the speed so far: " +
         speed_text(plain.median_ms, replayed.median_ms) + ")";
}

}  // namespace nimble::replayer
