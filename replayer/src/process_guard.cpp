#include "nimble/replayer/process_guard.hpp"

#include <algorithm>
#include <cstdio>

namespace nimble::replayer {
namespace {

// The lower median: pauses of the program only add time, so of two middle spans the faster one
// (with two spans each, one 10x slower than the rest, seen on the H200 in paused and running spans
// alike, read 8x as the mean of the two).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

std::string fixed(double value, const char* format) {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

}  // namespace

const char* guard_state_name(ProcessGuard::State state) {
  switch (state) {
    case ProcessGuard::State::Waiting: return "waiting";
    case ProcessGuard::State::Judging: return "judging";
    case ProcessGuard::State::Kept: return "kept";
    case ProcessGuard::State::SteppedAside: return "stepped aside";
  }
  return "?";
}

bool ProcessGuard::led(std::size_t calls, std::size_t span) const {
  return replaying_since_ && calls - *replaying_since_ >= options_.lead * options_.spans * span;
}

std::size_t ProcessGuard::span_length(const GuardView& view) const {
  return std::max({options_.span_calls, view.longest_iteration, std::size_t{1}});
}

void ProcessGuard::saw_host_sync(std::size_t calls) {
  if (last_host_sync_ && calls > *last_host_sync_) {
    sync_gap_ = std::max(sync_gap_, std::min(calls - *last_host_sync_, options_.longest_sync_gap));
  }
  last_host_sync_ = calls;
}

GuardAction ProcessGuard::tick(const GuardView& view) {
  if (options_.spans == 0 || state_ == State::SteppedAside) return GuardAction::None;
  if (view.at_host_point && replaying_since_) saw_host_sync(view.calls);
  if (state_ != State::Judging) {
    if (state_ == State::Kept && view.calls < judge_again_at_) return GuardAction::None;
    if (!view.replaying) return GuardAction::None;
    if (!replaying_since_) replaying_since_ = view.calls;
    // The paused spans will last the longer of a span and the gap between host syncs.
    if (state_ == State::Waiting && !led(view.calls, std::max(span_length(view), sync_gap_))) return GuardAction::None;
    // Once there is something to judge, the first span begins where the program just waited for the
    // GPU with nothing under way.
    if (!view.settled || !view.can_switch || !view.at_host_point) return GuardAction::None;
    state_ = State::Judging;
    paused_ns_.clear();
    running_ns_.clear();
    spoiled_ = 0;
    return begin_span(view, /*paused=*/true);
  }
  if (!view.settled) spoiled_now_ = true;
  const std::size_t length = span_length(view), calls = view.calls - span_calls_at_;
  if (calls < (warming_ ? std::max<std::size_t>(view.longest_iteration, 1) : length)) return GuardAction::None;
  // A span ends where the program waits for the GPU, as it began: what it queued is then done, and
  // its time is the program's, however far the host ran ahead in it (gradient accumulation reads its
  // loss every 10 optimizer steps; spans that ended anywhere put that wait in whichever held the read,
  // 25-95 us a call running against 22-33 paused, and stepped a 1.16x program aside on the H200).
  if (view.at_host_point && (paused_ || view.can_switch)) {
    if (!warming_) return end_span(view);
    // The running span's clock starts here, an iteration's worth after resuming: the first iteration
    // replayed after a pause updates or instantiates graph execs for what the paused ones moved (BERT
    // training on the H200: 19 ms against 14 for the rest; a running span that held such steps read
    // 0.96x of paused and stepped a 1.10x program aside).
    warming_ = false;
    spoiled_now_ = !view.settled;
    span_calls_at_ = view.calls;
    span_ns_at_ = view.ns;
    return GuardAction::None;
  }
  // Paused with no host sync in four spans' worth of calls, nor in twice the longest gap between
  // two seen: nimble run resumes, the span untimed.
  if (paused_ && calls >= std::max(4 * length, 2 * sync_gap_)) {
    spoiled_now_ = true;
    return end_span(view);
  }
  return GuardAction::None;
}

bool ProcessGuard::wants_host_syncs(std::size_t calls) const {
  switch (state_) {
    case State::Judging: return true;
    case State::Kept: return calls >= judge_again_at_;
    case State::Waiting: return led(calls, options_.span_calls);
    case State::SteppedAside: return false;
  }
  return false;
}

GuardAction ProcessGuard::begin_span(const GuardView& view, bool paused) {
  const bool was_paused = paused_;
  paused_ = paused;
  warming_ = !paused;
  // (A span that does not begin at a host sync is not timed either.)
  spoiled_now_ = !view.at_host_point;
  span_calls_at_ = view.calls;
  span_ns_at_ = view.ns;
  if (paused == was_paused) return GuardAction::None;
  return paused ? GuardAction::Pause : GuardAction::Resume;
}

GuardAction ProcessGuard::end_span(const GuardView& view) {
  const std::size_t calls = view.calls - span_calls_at_;
  const double ns_per_call = static_cast<double>(view.ns - span_ns_at_) / static_cast<double>(calls);
  if (spoiled_now_) {
    ++spoiled_;
  } else {
    (paused_ ? paused_ns_ : running_ns_).push_back(ns_per_call);
  }
  const GuardAction decided = verdict(view);
  if (state_ != State::Judging) return decided;
  return begin_span(view, !paused_);
}

GuardAction ProcessGuard::verdict(const GuardView& view) {
  const std::size_t n = std::min(paused_ns_.size(), running_ns_.size());
  bool keep = false;
  if (n >= 2 && *std::min_element(paused_ns_.begin(), paused_ns_.end()) >=
                    options_.quick_keep * *std::max_element(running_ns_.begin(), running_ns_.end())) {
    keep = true;
  } else if (n >= options_.spans) {
    keep = median(paused_ns_) >= options_.keep_above * median(running_ns_);
  } else if (spoiled_ <= 2 * options_.spans) {
    return GuardAction::None;  // not decided yet
  }
  ++judgements_;
  verdict_at_ = view.calls;
  last_host_sync_.reset();  // until the next judgement the hooks do not show the guard their syncs
  last_ratio_.reset();
  if (n > 0) last_ratio_ = median(paused_ns_) / median(running_ns_);
  // Too many spans met a recording being made or a trial to judge: nimble run goes on, judged later.
  undecided_ = !keep && n < options_.spans;
  if (keep || undecided_) {
    state_ = State::Kept;
    // Each later judgement waits 8x longer: a program that keeps paying pays little for it.
    judge_again_at_ = view.calls + (options_.rejudge_calls << std::min<std::size_t>(3 * (judgements_ - 1), 30));
    const bool was_paused = paused_;
    paused_ = false;
    return was_paused ? GuardAction::Resume : GuardAction::None;
  }
  state_ = State::SteppedAside;
  return GuardAction::StepAside;
}

std::string ProcessGuard::summary_text() const {
  if (judgements_ == 0 && state_ != State::Judging) return "";
  const std::string spans = std::to_string(paused_ns_.size()) + " paused and " + std::to_string(running_ns_.size()) +
                            " running span(s) of at least " + std::to_string(options_.span_calls) + " calls";
  const std::string ratio = last_ratio_ ? fixed(*last_ratio_, "%.3f") + "x" : "";
  switch (state_) {
    case State::Judging:
      return "nimble run: the program ended while the process guard was timing it (" + spans + " so far)\n";
    case State::SteppedAside:
      return "nimble run: stepped aside for good: the program ran " + ratio + " as fast with nimble run as with it paused (" +
             spans + "), below the " + fixed(options_.keep_above, "%.2f") +
             "x it must reach; later calls went straight to the driver\n";
    case State::Kept:
      if (undecided_) {
        return "nimble run: the process guard could not time the program (" + std::to_string(spoiled_) +
               " span(s) met a recording being made or a trial, or paused ones no host sync within " +
               std::to_string(std::max(4 * options_.span_calls, 2 * sync_gap_)) + " calls); nimble run went on\n";
      }
      return "nimble run: the process guard kept nimble run: the program ran " + ratio + " as fast with it as with it paused (" +
             spans + ", " + std::to_string(judgements_) + " judgement(s))\n";
    case State::Waiting:
      break;
  }
  return "";
}

}  // namespace nimble::replayer
