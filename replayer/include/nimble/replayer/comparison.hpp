// `nimble run --compare N`: one process alternates blocks of N iterations between replay and the
// program's own calls, and times every iteration from one start of the recorded iteration to the
// next. Both medians then come from the same process, interleaved in time, so what differs
// between processes (which cores they got, clock states: whole runs of one model differed by up
// to 3x on the shared GPU machines) cancels out of the ratio. CUDA-free; the hooks feed it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nimble::replayer {

enum class Phase { Replay, Plain };

// The timed iterations of one phase (not scheduler::PhaseTimes, the scheduler's own phases).
struct IterationTimes {
  std::size_t iterations = 0;  // timed iterations
  double median_ms = 0, p10_ms = 0, p90_ms = 0;
  double p25_ms = 0, p75_ms = 0;  // quartiles: two kinds of iteration show as a gap between them
  double fastest_ms = 0, slowest_ms = 0;
};

// What replay did during one timed iteration beyond launching its graphs: graph execs
// instantiated (one-off, new addresses) and node parameters written (addresses that moved).
struct IterationWork {
  std::size_t execs = 0, writes = 0;
  // Of the writes, those for parameters not seen in the segment's recent iterations: addresses
  // that are new, not a rotation among a few sets that further execs come to hold.
  std::size_t new_writes = 0;
};

// Iterations of a phase that ended and were not timed, by why: it did not run whole in its phase
// (a fall-back, calls not as recorded, another step's calls between it and the next begin, an exec
// made), or it was the first of its block.
struct UntimedIterations {
  std::size_t not_whole = 0, first_of_block = 0;
};

class Comparison {
 public:
  explicit Comparison(std::size_t block);

  std::size_t block() const { return block_; }
  // The phase the next iteration runs in.
  Phase phase() const { return phase_; }
  // Whether the current block has had all its iterations (the caller then switches at the next
  // iteration boundary).
  bool block_done() const { return begun_in_block_ >= block_; }
  // (After cut_block(), the switch back resumes the cut block.)
  void switch_phase();
  // The block under way is cut by another recording's iteration that begins alike: the phase
  // switches back until this recording's next iteration, where the next switch goes on with the
  // block, its iterations counted. (An inference service's lengths drawn at random cut nearly
  // every plain block: each began anew, its first untimed, and no block was ever whole.)
  void cut_block();

  // An iteration began at `ns` (steady clock) in the current phase. `previous_whole`: the one
  // before ran entirely in its phase (replayed whole, or issued with exactly the recorded calls);
  // only such iterations are timed, and never the first of a block (it still carries the
  // other phase's tail).
  // `previous_work`: what replay did during the iteration that ended here (kept with its time).
  void iteration_began(std::uint64_t ns, bool previous_whole, IterationWork previous_work = {});
  // The iteration begun last was not this recording's after all (another's that begins with the
  // same calls took it over): it is not timed and does not count in the block. (The one before it,
  // timed up to that first call, stays timed.)
  void not_begun();

  IterationTimes times(Phase phase) const;
  const UntimedIterations& untimed(Phase phase) const { return untimed_[static_cast<int>(phase)]; }
  // The timed iterations of `phase`, in the order they ran (ms).
  const std::vector<double>& samples(Phase phase) const { return samples_[static_cast<int>(phase)]; }
  // What replay did during each of them, in the same order (a slow replayed iteration that made
  // execs was learning; one that wrote many nodes met moved buffers).
  const std::vector<IterationWork>& work(Phase phase) const { return work_[static_cast<int>(phase)]; }

 private:
  std::size_t block_;
  Phase phase_ = Phase::Replay;
  std::size_t begun_in_block_ = 0;
  std::size_t cut_begun_ = 0;  // the cut block's begun_in_block_ (0: none cut)
  bool have_previous_ = false;
  std::uint64_t previous_start_ = 0;
  Phase previous_phase_ = Phase::Replay;
  bool previous_first_in_block_ = true;
  std::vector<double> samples_[2];  // ms, per Phase
  std::vector<IterationWork> work_[2];  // per Phase, parallel to samples_
  UntimedIterations untimed_[2];          // per Phase
};

}  // namespace nimble::replayer
