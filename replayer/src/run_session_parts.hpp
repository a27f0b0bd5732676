// What run_session.cpp (calls, recordings, switches) and run_trial.cpp (the trial: timing,
// verdicts, rests) both read of a recording. Private to the replayer library.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>

#include "nimble/replayer/run_session.hpp"

namespace nimble::replayer::session_parts {

// Whether the recording's iterations may be replayed now (not resting, not dropped).
inline bool replays(const Recording& r) { return r.state == RecordingState::Trial || r.state == RecordingState::Replaying; }

// A recording replaying now whose iteration a call with this signature could begin.
// (A side exit's recording begins only where its parent leaves: RunSession::exited.)
inline bool could_begin(const Recording& r, std::uint64_t signature) {
  return replays(r) && !r.exit_of && r.first_signature == signature;
}

// Fall-backs and false starts, but not the false starts another recording took over (a training
// step that begins like the eval step: a switch, not a failure).
inline std::size_t failures(const Recording& r) {
  const ShortCircuitSummary& s = r.short_circuit->summary();
  const std::size_t n = s.false_starts - std::min(s.false_starts, r.false_starts_taken_over) + s.fallbacks_total;
  return n - std::min(n, r.fallbacks_to_side_exits);  // (a side exit taken is the program's way, not a failure)
}

// `first` iterations, 8x longer after each of `earlier` times, at most 2^30 (rests and checks;
// NIMBLE_RUN_TRIALS goes to 100).
inline std::size_t eightfold(std::size_t first, std::size_t earlier) {
  constexpr std::size_t kLongest = std::size_t{1} << 30;
  std::size_t n = std::min(first, kLongest);
  for (std::size_t i = 0; i < earlier; ++i) n = std::min(n * 8, kLongest);
  return n;
}

// The execs r's executor has made and the node parameters it has written, so far.
inline IterationWork executor_totals(const Recording& r) {
  return r.executor ? IterationWork{r.executor->execs_made(), r.executor->node_writes()} : IterationWork{};
}

inline std::string speed_text(double plain_ms, double replayed_ms) {
  char text[160];
  std::snprintf(text, sizeof text, "%.3f ms plain, %.3f ms replayed: %.2fx", plain_ms, replayed_ms, plain_ms / replayed_ms);
  return text;
}

// The last earlier trial timed nothing and shows only as "not timed": why it ended, the reason of
// the rest that followed it (its buffers moved, say), unless the exit line says it already.
inline std::string rest_untimed_text(const Recording& r) {
  const bool untimed = !r.earlier_trials.empty() && r.earlier_trials.back() == 0.0;
  if (!untimed || r.last_rested_because.empty() || r.state == RecordingState::Resting || r.state == RecordingState::Dropped) {
    return "";
  }
  return "it rested last because " + r.last_rested_because;
}


}  // namespace nimble::replayer::session_parts
