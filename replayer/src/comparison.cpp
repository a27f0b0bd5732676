#include "nimble/replayer/comparison.hpp"

#include <algorithm>
#include <utility>

namespace nimble::replayer {

Comparison::Comparison(std::size_t block) : block_(std::max<std::size_t>(1, block)) {}

void Comparison::switch_phase() {
  phase_ = phase_ == Phase::Replay ? Phase::Plain : Phase::Replay;
  begun_in_block_ = std::exchange(cut_begun_, 0);
}

void Comparison::iteration_began(std::uint64_t ns, bool previous_whole, IterationWork previous_work) {
  const int ended = static_cast<int>(previous_phase_);
  if (have_previous_ && previous_whole && !previous_first_in_block_ && ns > previous_start_) {
    samples_[ended].push_back(static_cast<double>(ns - previous_start_) / 1e6);
    work_[ended].push_back(previous_work);
  } else if (have_previous_) {
    ++(previous_whole ? untimed_[ended].first_of_block : untimed_[ended].not_whole);
  }
  have_previous_ = true;
  previous_start_ = ns;
  previous_phase_ = phase_;
  // The first of a block still carries the other phase's tail; with blocks of one, every
  // iteration is a first, and all are timed (none could be otherwise).
  previous_first_in_block_ = begun_in_block_ == 0 && block_ > 1;
  ++begun_in_block_;
}

void Comparison::cut_block() {
  const std::size_t begun = begun_in_block_;
  switch_phase();
  cut_begun_ = begun;
}

void Comparison::not_begun() {
  have_previous_ = false;
  if (begun_in_block_ > 0) --begun_in_block_;
}

IterationTimes Comparison::times(Phase phase) const {
  std::vector<double> s = samples_[static_cast<int>(phase)];
  IterationTimes t;
  t.iterations = s.size();
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  auto at = [&](double q) { return s[static_cast<std::size_t>(q * static_cast<double>(s.size() - 1) + 0.5)]; };
  t.median_ms = s.size() % 2 ? s[s.size() / 2] : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
  t.p10_ms = at(0.1);
  t.p90_ms = at(0.9);
  t.p25_ms = at(0.25);
  t.p75_ms = at(0.75);
  t.fastest_ms = s.front();
  t.slowest_ms = s.back();
  return t;
}

}  // namespace nimble::replayer
