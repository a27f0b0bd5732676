#include "period_detector.hpp"

#include <algorithm>
#include <optional>

#include "signature.hpp"

namespace nimble::hooks {

std::size_t period_explaining(const std::vector<std::uint64_t>& seq, std::size_t span, std::size_t repeats,
                              std::size_t max_period, std::size_t min_span, const std::vector<bool>* kernel) {
  // Every period's run begins with the last entry equal to the one p before it: those p are the
  // candidates (AutoRange keeps them as tasks come, EarlierOccurrences).
  std::vector<std::size_t> distances;
  const std::size_t longest = std::min(max_period, seq.size() / std::max<std::size_t>(repeats, 2));
  for (std::size_t p = 1; p <= longest; ++p) {
    if (seq[seq.size() - 1 - p] == seq.back()) distances.push_back(p);
  }
  return period_explaining(seq, distances, span, repeats, max_period, min_span, kernel);
}

std::size_t period_explaining(const std::vector<std::uint64_t>& seq, const std::vector<std::size_t>& distances,
                              std::size_t span, std::size_t repeats, std::size_t max_period, std::size_t min_span,
                              const std::vector<bool>* kernel, std::size_t shortest, std::size_t* short_loop) {
  const std::size_t n = seq.size();
  repeats = std::max<std::size_t>(repeats, 2);
  const std::size_t longest = std::min(max_period, n / repeats);
  std::size_t passed_over = 0;  // candidates up to here are too short, or a short loop's copies
  for (const std::size_t p : distances) {
    if (p > longest) break;
    if (p <= passed_over) continue;
    const std::size_t copies = std::max(repeats, (min_span + p - 1) / p);
    const std::size_t needed = std::max(span, copies * p);
    if (needed > n) continue;
    const std::size_t run = needed - p;  // entries that must equal the one p earlier
    std::size_t i = 0;
    while (i < run && seq[n - 1 - i] == seq[n - 1 - i - p]) ++i;
    if (i != run) continue;
    if (kernel) {
      bool launches = false;
      for (std::size_t k = n - p; k < n && !launches; ++k) launches = (*kernel)[k];
      if (!launches) continue;
    }
    if (p < shortest) {
      // The loop's run: its p entries and every entry back from the end that equals the one p
      // earlier. A block of at most that many entries is the loop again.
      // (Followed only as far as a candidate can be: a program in a long short loop pays for the
      // longest period, not for its history.)
      std::size_t loop = p;
      while (loop <= longest && loop < n && seq[n - 1 - (loop - p)] == seq[n - 1 - loop]) ++loop;
      passed_over = std::max(shortest - 1, loop);
      if (short_loop) *short_loop = p;
      continue;
    }
    return p;
  }
  return 0;
}

std::uint64_t& EarlierOccurrences::last_of(std::uint64_t value) {
  if (2 * (used_ + 1) > last_.size()) rebuild(std::max<std::size_t>(64, 4 * (used_ + 1)));
  const std::size_t mask = last_.size() - 1;
  for (std::size_t i = static_cast<std::size_t>((value * 0x9e3779b97f4a7c15ULL) >> 32) & mask;; i = (i + 1) & mask) {
    Slot& slot = last_[i];
    if (slot.where == 0) {
      slot.value = value;
      ++used_;
      return slot.where;
    }
    if (slot.value == value) return slot.where;
  }
}

void EarlierOccurrences::rebuild(std::size_t capacity) {
  std::size_t size = 64;
  while (size < capacity) size *= 2;
  std::vector<Slot> old(size);
  old.swap(last_);
  used_ = 0;
  for (const Slot& slot : old) {
    if (slot.where > base_) last_of(slot.value) = slot.where;  // (values last seen before the log are forgotten)
  }
}

void EarlierOccurrences::push(std::uint64_t value) {
  const std::uint64_t here = base_ + previous_.size() + 1;
  std::uint64_t& last = last_of(value);
  previous_.push_back(last);
  last = here;
}

void EarlierOccurrences::drop_front(std::size_t count) {
  count = std::min(count, previous_.size());
  previous_.erase(previous_.begin(), previous_.begin() + static_cast<std::ptrdiff_t>(count));
  base_ += count;
  // Values last seen before the log's start are forgotten once they could be half the table (a
  // program whose shapes keep changing would grow it without end).
  if (used_ > 2 * previous_.size() + 64) rebuild(4 * previous_.size());
}

void EarlierOccurrences::clear() {
  previous_.clear();
  last_.clear();
  used_ = 0;
  base_ = 0;
}

std::vector<std::size_t> EarlierOccurrences::distances(std::size_t longest) const {
  std::vector<std::size_t> out;
  if (previous_.empty()) return out;
  const std::uint64_t last = base_ + previous_.size();  // 1 + the last entry's absolute index
  for (std::uint64_t at = previous_.back(); at > base_;) {  // (at <= base_: before the log's start, or none)
    const std::uint64_t p = last - at;
    if (p > longest) break;
    out.push_back(static_cast<std::size_t>(p));
    at = previous_[static_cast<std::size_t>(at - 1 - base_)];
  }
  return out;
}

namespace {
// The rolling hash's base (odd: multiplying by it is a bijection modulo 2^64) and its kGram-th power.
constexpr std::uint64_t kGramBase = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t power(std::uint64_t base, std::size_t exponent) {
  std::uint64_t result = 1;
  for (std::size_t i = 0; i < exponent; ++i) result *= base;
  return result;
}
constexpr std::uint64_t kGramBaseToK = power(kGramBase, PeriodCandidates::kGram);
}  // namespace

void PeriodCandidates::push(std::uint64_t value) {
  std::uint64_t& slot = last_[pushed_ % kGram];
  gram_ = gram_ * kGramBase + value;
  if (pushed_ >= kGram) gram_ -= slot * kGramBaseToK;  // the entry kGram back leaves the gram
  slot = value;
  ++pushed_;
  grams_.push(gram_);
}

void PeriodCandidates::drop_front(std::size_t count) { grams_.drop_front(count); }

void PeriodCandidates::clear() {
  *this = PeriodCandidates();
}

std::vector<std::size_t> PeriodCandidates::distances(std::size_t longest) const {
  std::vector<std::size_t> out;
  const std::size_t kept = grams_.size();
  if (kept == 0) return out;
  const std::uint64_t last = last_[(pushed_ - 1) % kGram];
  const std::size_t short_end = std::min({kGram - 1, longest, kept - 1});
  for (std::size_t p = 1; p <= short_end; ++p) {
    if (last_[(pushed_ - 1 - p) % kGram] == last) out.push_back(p);
  }
  for (const std::size_t p : grams_.distances(longest)) {
    if (p >= kGram) out.push_back(p);
  }
  return out;
}

std::size_t smallest_repeating_period(const std::vector<std::uint64_t>& seq, std::size_t repeats,
                                      std::size_t max_period, std::size_t min_span,
                                      const std::vector<bool>* kernel) {
  return period_explaining(seq, 0, repeats, max_period, min_span, kernel);  // its copies are the span
}

SubPeriod tiling_sub_period(const std::vector<std::uint64_t>& seq, std::size_t period, std::size_t repeats,
                            double cover, std::size_t min_block, const std::vector<bool>* kernel) {
  const std::size_t n = seq.size();
  if (cover <= 0 || period > n || repeats < 2) return {};
  const std::size_t begin = n - period;
  const auto needed = static_cast<std::size_t>(cover * static_cast<double>(period) + 0.999999);
  const std::size_t slack = period - std::min(needed, period);  // entries outside the run, at most
  for (std::size_t q = std::max<std::size_t>(1, min_block); q * repeats <= period && q < period; ++q) {
    // Any run covering `needed` entries holds seq[i] == seq[i + q] across the middle of the
    // period: check there first (most q fail at once), then find where the run begins and ends.
    const std::size_t mid_begin = begin + slack, mid_end = n - slack;  // [mid_begin, mid_end) inside the run
    if (mid_end <= mid_begin + q) continue;
    bool holds = true;
    for (std::size_t i = mid_begin; i + q < mid_end && holds; ++i) holds = seq[i] == seq[i + q];
    if (!holds) continue;
    std::size_t first = mid_begin;
    while (first > begin && seq[first - 1] == seq[first - 1 + q]) --first;
    std::size_t last = mid_end - q - 1;  // the last i checked so far with seq[i] == seq[i + q]
    while (last + q + 1 < n && seq[last + 1] == seq[last + 1 + q]) ++last;
    const std::size_t blocks = (last + q + 1 - first) / q;  // whole blocks in the run
    if (blocks < repeats || blocks * q < needed) continue;
    if (kernel) {
      bool launches = false;
      for (std::size_t k = first; k < first + q && !launches; ++k) launches = (*kernel)[k];
      if (!launches) continue;
    }
    return {q, first - begin};
  }
  return {};
}

std::uint64_t period_fingerprint(const std::vector<std::uint64_t>& seq, std::size_t period, std::size_t end) {
  std::uint64_t sum = mix(0, period);
  const std::size_t stop = seq.size() - std::min(end, seq.size());
  for (std::size_t k = stop - std::min(period, stop); k < stop; ++k) sum += mix(0x6e696d626c65ULL, seq[k]);
  return sum;
}

std::uint64_t period_fingerprint(const std::vector<std::uint64_t>& seq, std::size_t period) {
  return period_fingerprint(seq, period, 0);
}

AutoRange::AutoRange(Options options) : options_(options) {
  if (options_.iteration < 1) options_.iteration = 1;
  if (options_.repeats < 2) options_.repeats = 2;
  if (options_.max_period < 1) options_.max_period = 1;
  if (options_.check_every < 1) options_.check_every = 1;
}

bool AutoRange::matches_period() const {
  const std::size_t n = history_.size();
  return n > match_distance_ && history_[n - 1] == history_[n - 1 - match_distance_];
}

void AutoRange::trim_history() {
  // Keep enough for the longest period's repeats, and for the distance at which a found period
  // is checked (a stretch between syncs can be longer); drop in big steps to stay amortised O(1).
  const std::size_t keep = std::max(options_.repeats * options_.max_period, match_distance_) + 1;
  if (history_.size() > 2 * keep) {
    candidates_.drop_front(history_.size() - keep);
    history_.erase(history_.begin(), history_.end() - keep);
    kernels_.erase(kernels_.begin(), kernels_.end() - keep);
  }
}

void AutoRange::restart(int iteration) {
  if (iteration > 0) options_.iteration = iteration;
  if (from_remembered_ && phase_ == Phase::Done && !diverged_) remembered_.clear();  // recorded
  if (diverged_ && options_.remember_diverged) {
    if (from_remembered_) {
      remembered_.clear();  // it diverged again: not the program's pattern after all
    } else if (!candidate_.empty()) {
      remembered_ = candidate_;
    }
  }
  candidate_.clear();
  from_remembered_ = false;
  history_.clear();
  kernels_.clear();
  candidates_.clear();
  phase_ = Phase::Detecting;
  last_sync_ = 0;
  last_check_ = total_;
  period_ = 0;
  match_distance_ = 0;
  remaining_ = 0;
  captured_ = 0;
  diverged_ = false;
  anchored_at_sync_ = false;
  known_in_a_row_ = 0;
  known_since_ = 0;
  in_short_loop_ = false;
  sync_look_found_nothing_ = false;
}

void AutoRange::prime(const std::vector<std::pair<std::uint64_t, bool>>& tasks) {
  for (const auto& [signature, kernel] : tasks) append(signature, kernel);
  last_check_ = total_;
  trim_history();
}

// Between syncs (the last `stretch` entries end with one): one block repeated across nearly all
// of it is the iteration. Its window opens after the stretch's head, and the steady tasks repeat
// at the stretch's length. False when there is no such block.
bool AutoRange::begin_sub_period(std::size_t stretch) {
  if (stretch < 8 * options_.sub_period_min_tasks) return false;
  const std::size_t min_block = std::max(options_.sub_period_min_tasks, (options_.min_span + options_.repeats - 1) / options_.repeats);
  const SubPeriod sub = tiling_sub_period(history_, stretch, options_.repeats, options_.sub_period_cover, min_block,
                                          options_.require_kernel ? &kernels_ : nullptr);
  if (!sub.period) return false;
  begin_waiting(sub.period, stretch, sub.head, period_fingerprint(history_, sub.period, stretch - sub.head - sub.period), true);
  return true;
}

// A program that synchronised and has been quiet for quiet_after tasks (up to max_period; beyond,
// the periodic check below): every quiet_check tasks, the period that explains most of what it
// issued since the sync, its window opening where a step would after the sync. True when the
// check was made (whether or not it found one).
bool AutoRange::look_while_quiet(bool host_sync) {
  if (host_sync || last_sync_ == 0) return false;  // (before the threshold: this runs for every task)
  const std::size_t quiet_for = total_ - last_sync_;
  const std::size_t threshold = quiet_threshold();
  if (threshold == 0 || quiet_for <= threshold || quiet_for > options_.max_period ||
      total_ - last_check_ < std::min(options_.quiet_check, threshold / 2)) {
    return false;
  }
  last_check_ = total_;
  const auto span = static_cast<std::size_t>(options_.quiet_cover * static_cast<double>(std::min(quiet_for, history_.size())));
  std::size_t p = explaining_period(span);
  // Quiet by the program's own measure, not the fixed one: what repeats over that many tasks is
  // its loop, even when set-up after the last sync is most of the stretch.
  if (p == 0 && threshold < options_.quiet_after) p = explaining_period(threshold);
  if (p != 0) begin_waiting(p, p, phase_after_last_sync(p), period_fingerprint(history_, p), false);
  else found_nothing();
  return true;
}

// Tasks without a sync after which a program that did sync counts as quiet (0: never).
std::size_t AutoRange::quiet_threshold() const {
  if (options_.quiet_after == 0) return 0;
  const std::size_t known = std::min(sync_gaps_seen_, sync_gaps_.size());
  const std::size_t longest = known == 0 ? 0 : *std::max_element(sync_gaps_.begin(), sync_gaps_.begin() + known);
  // Halfway through a stretch, after a look at a sync that found nothing (a gap of 2,050 tasks would
  // otherwise never count as quiet: a sync comes before twice the gap, or 4,096 tasks).
  if (sync_look_found_nothing_ && longest != 0) {
    return std::clamp(longest / 2, std::min(options_.quiet_after_min, options_.quiet_after), options_.quiet_after);
  }
  if (known < sync_gaps_.size()) return options_.quiet_after;  // its cadence is not known yet
  return std::clamp(2 * longest, std::min(options_.quiet_after_min, options_.quiet_after), options_.quiet_after);
}

void AutoRange::note_sync_gap() {
  if (last_sync_ever_ != 0) sync_gaps_[sync_gaps_seen_++ % sync_gaps_.size()] = total_ - last_sync_ever_;
  last_sync_ever_ = total_;
}

// Found away from a sync (a stretch without syncs longer than max_period, in a program that did
// sync before): the tasks to let pass so that the window opens where the repeating run after the
// last sync began, as a step would after the sync, rather than anywhere inside a step; then a
// later sync falls between two recorded iterations, not inside one.
std::size_t AutoRange::phase_after_last_sync(std::size_t p) const {
  const std::size_t n = history_.size();
  std::size_t after_sync = 0;  // history index of the first task after it
  if (last_sync_ != 0 && total_ - last_sync_ < n) {
    after_sync = n - (total_ - last_sync_);
  } else if (last_sync_ != 0 || total_ != n) {
    return 0;  // the sync is gone, or was before a restart
  }
  // (Never synced, with the whole program in the history: the loop's run begins with its first
  // iteration. Cut where the look happened to be, the recorded iteration straddles two of the
  // program's, and a read that comes after some iterations lands inside one: a fall-back each time.)
  std::size_t first = std::max(n - p, after_sync);  // the run of period p goes back at least to here (not before the sync)
  while (first > after_sync && history_[first - 1] == history_[first - 1 + p]) --first;
  return (p - (n - first) % p) % p;
}

// The last tasks, up to this sync, are the remembered period task for task (it was found at a
// sync, so it ends with one; syncs inside it, such as a pageable copy's, do not matter).
bool AutoRange::met_remembered() const {
  const std::size_t n = remembered_.size();
  if (n == 0 || history_.size() < n) return false;
  return std::equal(remembered_.rbegin(), remembered_.rend(), history_.rbegin());
}

// A period recorded before, or a block made of copies of one (a sub-period of at least
// sub_period_min_tasks holds two steps of 318 tasks: the step recorded and dropped, twice). The
// block ends `end` tasks before the history does.
bool AutoRange::is_known(std::size_t length, std::size_t end, std::uint64_t fingerprint) const {
  if (!options_.known) return false;
  if (options_.known(fingerprint)) return true;
  const std::size_t n = history_.size();
  if (length + end > n) return false;
  // (Fingerprints are the same from any phase of a block: the last p tasks of the block will do.)
  const std::size_t begin = n - end - length, stop = n - end;
  for (std::size_t p = 1; 2 * p <= length; ++p) {
    if (length % p != 0) continue;
    bool copies = true;
    for (std::size_t i = begin; i + p < stop && copies; ++i) copies = history_[i] == history_[i + p];
    if (copies && options_.known(period_fingerprint(history_, p, end))) return true;
  }
  return false;
}

void AutoRange::found_nothing() { known_since_ = 0; }

void AutoRange::begin_waiting(std::size_t length, std::size_t distance, std::size_t head, std::uint64_t fingerprint,
                              bool at_sync) {
  sync_look_found_nothing_ = false;
  // (A block repeated between two syncs ends where the stretch's tail begins.)
  if (is_known(length, distance != length ? distance - head - length : 0, fingerprint)) {
    ++known_in_a_row_;
    if (known_since_ == 0) known_since_ = total_;
    return;
  }
  known_in_a_row_ = 0;
  known_since_ = 0;
  candidate_.clear();
  if (options_.remember_diverged && at_sync && head == 0 && distance == length && length <= history_.size()) {
    candidate_.assign(history_.end() - static_cast<std::ptrdiff_t>(length), history_.end());
  }
  if (options_.begins_a_recording && distance == length && length <= history_.size()) {
    // The next period repeats the last: its task at `head + k` is history_[n - length + head + k].
    // Only a start the period holds once: one that recurs inside it (a fill kernel used throughout
    // a step) does not say where the other recording's iteration began.
    const std::size_t n = history_.size();
    std::optional<std::size_t> start;
    std::uint64_t starts_with = 0;
    bool unique = true;
    for (std::size_t k = 0; k < length && unique; ++k) {
      const std::size_t at = (head + k) % length;
      const std::uint64_t signature = history_[n - length + at];
      if (start) {
        unique = signature != starts_with;
      } else if (options_.begins_a_recording(signature)) {
        start = at;
        starts_with = signature;
      }
    }
    if (start && unique) {
      at_sync = at_sync && *start == head;
      head = *start;
    }
  }
  fingerprint_ = fingerprint;
  period_ = length;
  match_distance_ = distance;
  anchored_at_sync_ = at_sync;
  ++detections_;
  remaining_ = head + static_cast<std::size_t>(options_.iteration - 1) * length;
  phase_ = Phase::Waiting;
}

std::size_t AutoRange::explaining_period(std::size_t span) {
  ++looks_;
  std::size_t short_loop = 0;
  const std::size_t p =
      period_explaining(history_, candidates_.distances(options_.max_period), span, options_.repeats, options_.max_period,
                        options_.min_span, options_.require_kernel ? &kernels_ : nullptr, options_.shortest, &short_loop);
  if (p == 0 && short_loop != 0 && !in_short_loop_) short_loop_since_ = total_;
  in_short_loop_ = p == 0 && short_loop != 0;
  if (short_loop != 0) short_loop_ = short_loop;
  return p;
}

void AutoRange::append(std::uint64_t signature, bool kernel) {
  history_.push_back(signature);
  kernels_.push_back(kernel);
  candidates_.push(signature);
  ++total_;
  const std::size_t n = history_.size();
  if (in_short_loop_ && (n <= short_loop_ || history_[n - 1] != history_[n - 1 - short_loop_])) in_short_loop_ = false;
}

AutoRange::Action AutoRange::on_task(std::uint64_t signature, bool host_sync, bool kernel) {
  append(signature, kernel);
  trim_history();
  if (host_sync) note_sync_gap();

  switch (phase_) {
    case Phase::Detecting: {
      const std::size_t previous_sync = last_sync_;
      if (host_sync) last_sync_ = total_;
      // Inside the short loop the last look passed over: each look would walk its whole run to
      // find the same, and the program may stay in it for long. A longer period that ends with
      // the loop is found once the run breaks (at the next step's first other task).
      if (in_short_loop_) return Action::None;
      // One stretch between two syncs that is nearly all one repeated block is enough: the
      // program logs every N steps, and waiting for three identical stretches would take 3N. (A
      // known block returns true too: the whole stretch is then not wanted either.) A stretch
      // longer than the history kept is not cut: the periodic check below found its block already.
      if (host_sync && previous_sync != 0 && total_ - previous_sync <= history_.size() &&
          begin_sub_period(total_ - previous_sync)) {
        return Action::None;
      }
      if (look_while_quiet(host_sync)) return Action::None;
      if (host_sync && met_remembered()) {
        const std::uint64_t fingerprint = period_fingerprint(history_, remembered_.size());
        if (options_.known && options_.known(fingerprint)) {
          remembered_.clear();  // recorded since (a window written after all): nothing to remember
        } else {
          from_remembered_ = true;
          begin_waiting(remembered_.size(), remembered_.size(), 0, fingerprint, true);
          return Action::None;
        }
      }
      const bool syncs_recently = last_sync_ != 0 && total_ - last_sync_ <= options_.max_period;
      const bool look = host_sync || (!syncs_recently && total_ - last_check_ >= options_.check_every);
      if (!look) return Action::None;
      last_check_ = total_;
      const std::size_t p = explaining_period(0);  // (smallest_repeating_period, from the candidates)
      // (Only once the stretch could have repeated: the first syncs of any loop find nothing yet, and a
      // halfway look there took a layer or time step for the step.)
      if (host_sync) {
        sync_look_found_nothing_ =
            p == 0 && previous_sync != 0 && history_.size() >= options_.repeats * (total_ - previous_sync);
      }
      if (p == 0) {
        found_nothing();
        return Action::None;
      }
      if (host_sync && p != total_ - previous_sync && begin_sub_period(p)) return Action::None;
      begin_waiting(p, p, host_sync ? 0 : phase_after_last_sync(p), period_fingerprint(history_, p), host_sync);
      return Action::None;
    }
    case Phase::Waiting: {
      if (!matches_period()) {
        phase_ = Phase::Detecting;  // the program changed its pattern: look again
        from_remembered_ = false;
        last_check_ = total_;
        return Action::None;
      }
      if (remaining_ > 0) {
        --remaining_;
        return Action::None;
      }
      phase_ = Phase::Capturing;
      window_start_ = total_ - 1;
      captured_ = 1;
      if (captured_ == period_) {
        phase_ = Phase::Done;
        return Action::BeginBeforeEndAfter;
      }
      return Action::BeginBefore;
    }
    case Phase::Capturing: {
      if (!matches_period()) diverged_ = true;
      if (++captured_ == period_) {
        phase_ = Phase::Done;
        return Action::EndAfter;
      }
      return Action::None;
    }
    case Phase::Done:
      return Action::None;
  }
  return Action::None;
}

bool DivergedWindows::let_go(const AutoRange& range, const std::function<bool(std::uint64_t)>& known) {
  if (!range.diverged()) return false;
  if (known && known(range.window_fingerprint())) return true;
  return let_go_[range.fingerprint()]++ < kLetGoPerPeriod;
}

}  // namespace nimble::hooks
