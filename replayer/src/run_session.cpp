#include "nimble/replayer/run_session.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "run_session_parts.hpp"

namespace nimble::replayer {

using namespace session_parts;

namespace {

// A recording replaying now whose iteration a call with this signature could begin.
// (A side exit's recording begins only where its parent leaves: RunSession::exited.)
bool could_begin(const Recording& r, std::uint64_t signature) {
  return replays(r) && !r.exit_of && r.first_signature == signature;
}

// Fall-backs and false starts, but not the false starts another recording took over (a training
// step that begins like the eval step: a switch, not a failure), nor switches to iterations not
// recorded yet, nor mismatches counted with another in the same iteration's worth of calls.
std::size_t failures(const Recording& r) {
  const ShortCircuitSummary& s = r.short_circuit->summary();
  const std::size_t n = s.false_starts - std::min(s.false_starts, r.false_starts_taken_over) + s.fallbacks_total;
  // (A side exit taken is the program's way, not a failure.)
  return n - std::min(n, r.fallbacks_to_side_exits + r.switches_to_unrecorded + r.mismatches_in_one_iteration);
}

bool replayed_whole(const Recording& r) { return r.short_circuit->summary().iterations_replayed > 0; }

// The last earlier trial timed nothing and shows only as "not timed": why it ended, the reason of
// the rest that followed it (no replayed iteration could be timed, say), unless the exit line says
// it already.
std::string rest_untimed_text(const Recording& r) {
  const bool untimed = !r.earlier_trials.empty() && r.earlier_trials.back() == 0.0;
  if (!untimed || r.last_rested_because.empty() || !replays(r)) {
    return "";
  }
  return "it rested last because " + r.last_rested_because;
}

}  // namespace

const char* state_name(RecordingState state) {
  switch (state) {
    case RecordingState::Trial: return "trial";
    case RecordingState::Replaying: return "replaying";
    case RecordingState::Resting: return "resting";
    case RecordingState::Dropped: return "dropped";
  }
  return "?";
}

RunSession::RunSession(RunOptions options, IsDevicePointer is_device_pointer, Clock clock)
    : options_(options),
      guard_(options.compare_block > 0 ? GuardOptions{.spans = 0} : options.guard),
      is_device_pointer_(std::move(is_device_pointer)),
      clock_(std::move(clock)),
      side_exits_(SideExits::Options{.shortest = std::max<std::size_t>(options.side_exit_shortest, 1)}) {
  options_.max_recordings = std::clamp<std::size_t>(options_.max_recordings, 1, kMaxRecordings);
  options_.give_up_after = std::max<std::size_t>(options_.give_up_after, 1);
  stale_after_.store(stale_after(), std::memory_order_relaxed);
}

std::size_t RunSession::stale_after() const {
  std::size_t longest = 0;
  for (const auto& r : recordings_) {
    if (r->state != RecordingState::Dropped) longest = std::max(longest, r->calls);
  }
  return std::max(options_.stale_calls, 2 * longest) << std::min(known_only_looks_, kLongestKnownOnlyBackoff);
}

void RunSession::looked_and_found_only_known() {
  ++known_only_looks_;
  requested_.store(false, std::memory_order_relaxed);  // asked again once stale by the new measure
  eager_since_begun_.store(0, std::memory_order_relaxed);
  stale_after_.store(stale_after(), std::memory_order_relaxed);
}

std::unique_ptr<Recording> RunSession::build(RecordingSetup setup) const {
  auto r = std::make_unique<Recording>();
  r->name = std::move(setup.name);
  r->plan = std::move(setup.plan);
  r->segments = std::move(setup.segments);
  r->first_signature = setup.first_signature;
  r->call_signatures = std::move(setup.call_signatures);
  r->calls_before_first = setup.calls_before_first;
  r->end_reads = setup.end_reads;
  r->fingerprint = setup.fingerprint;
  r->exit_of = setup.side_exit;
  const auto& calls = r->call_signatures;
  r->begins_after_host_point = r->end_reads > 0 && !calls.empty() &&
                               std::find(calls.begin() + 1, calls.end(), r->first_signature) != calls.end();
  for (const Op& op : r->plan.ops) r->calls += op.kind != OpKind::Nop;
  r->executor = setup.make_executor(r->plan, r->segments);
  r->short_circuit = std::make_unique<ShortCircuit>(r->plan, r->segments, is_device_pointer_, *r->executor, setup.rule);
  r->short_circuit->hand_back_false_starts(true);  // another recording may begin alike (after_false_start)
  if (setup.skip_library) r->memo = std::make_unique<LibraryMemo>(r->plan, setup.library);
  const std::size_t block = options_.compare_block ? options_.compare_block : options_.trial_block;
  // A side exit is part of its parent's iteration, whose trial paid: no trial of its own.
  if (block > 0 && !r->exit_of) r->comparison = std::make_unique<Comparison>(block);
  r->state = r->comparison ? RecordingState::Trial : RecordingState::Replaying;
  return r;
}

std::size_t RunSession::add(RecordingSetup setup) { return add(build(std::move(setup))); }

std::size_t RunSession::add(std::unique_ptr<Recording> r) {
  std::size_t live = 0;
  Recording* oldest = nullptr;
  for (auto& other : recordings_) {
    // Side exits are counted apart (RunSession::exited asks for no more than max_recordings).
    if (other->state == RecordingState::Dropped || other->exit_of.has_value() != r->exit_of.has_value()) continue;
    ++live;
    if (!oldest || other->last_begun < oldest->last_begun) oldest = other.get();
  }
  if (live >= options_.max_recordings && oldest) {
    drop(*oldest, "replaced by a newer recording (at most " + std::to_string(options_.max_recordings) +
                      " are kept; this one began no iteration for the longest time)");
  }
  r->last_begun = calls_seen();
  r->rank = ++rank_clock_;  // the newest is tried first
  if (r->fingerprint) known_.push_back(r->fingerprint);
  // The first replayed iterations learn (graph variants for changing arguments, library calls
  // seen twice before they are skipped): the trial times the ones after a block of them.
  if (r->state == RecordingState::Trial && options_.compare_block == 0) r->warmup_left = options_.trial_block;
  const bool side_exit = r->exit_of.has_value();
  recordings_.push_back(std::move(r));
  eager_since_begun_.store(0, std::memory_order_relaxed);
  if (!side_exit) {  // a new iteration: side exits may look again (a side exit's recording is no new find)
    requested_.store(false, std::memory_order_relaxed);
    fruitless_looks_ = 0;
    known_only_looks_ = 0;
    side_exit_looks_.store(0, std::memory_order_relaxed);
    left_loop_.store(false, std::memory_order_relaxed);
    primer_.clear();
  }
  publish_recordings();
  return recordings_.size() - 1;
}

bool RunSession::knows(std::uint64_t fingerprint) const {
  return std::find(known_.begin(), known_.end(), fingerprint) != known_.end();
}

const Recording* RunSession::same_calls_as(const Recording& r) const {
  if (r.exit_of || r.call_signatures.empty()) return nullptr;
  for (const auto& other : recordings_) {
    if (other->state != RecordingState::Dropped && !other->exit_of && other->call_signatures == r.call_signatures &&
        other->calls_before_first == r.calls_before_first && other->end_reads == r.end_reads) {
      return other.get();
    }
  }
  return nullptr;
}

void RunSession::reject(std::uint64_t fingerprint) {
  ++dropped_;
  pass_over(fingerprint);
}

void RunSession::pass_over(std::uint64_t fingerprint) {
  if (fingerprint && !knows(fingerprint)) known_.push_back(fingerprint);
  requested_.store(false, std::memory_order_relaxed);  // the search goes on
  primer_.clear();
  publish_recordings();
}

// Lock-free (passed_by calls it): only atomics that publish_recordings() keeps.
bool RunSession::wants_recording() const {
  if (gave_up_.load(std::memory_order_relaxed)) return false;
  if (calls_.load(std::memory_order_relaxed) < look_rest_until_.load(std::memory_order_relaxed)) return false;
  return live_.load(std::memory_order_relaxed) == 0 ||
         eager_since_begun_.load(std::memory_order_relaxed) >= stale_after_.load(std::memory_order_relaxed) ||
         (left_loop_.load(std::memory_order_relaxed) &&
          side_exit_looks_.load(std::memory_order_relaxed) < options_.side_exit_looks);
}

// What the hooks read without the lock, after every call: whether anything is under way.
void RunSession::publish() {
  engaged_.store(active_ != nullptr || plain_owner_.has_value(), std::memory_order_relaxed);
}

// And what changes only when a recording is added, dropped or refused. Only live recordings can
// begin an iteration.
void RunSession::publish_recordings() {
  std::size_t k = 0;
  for (const auto& r : recordings_) {
    if (r->state != RecordingState::Dropped && !r->exit_of && k < kMaxRecordings) {
      begins_from_[k].store(r->state == RecordingState::Resting ? r->rest_until : 0, std::memory_order_relaxed);
      after_host_point_only_[k].store(r->begins_after_host_point, std::memory_order_relaxed);
      first_signatures_[k++].store(r->first_signature, std::memory_order_relaxed);
    }
  }
  live_.store(k, std::memory_order_relaxed);
  for (; k < kMaxRecordings; ++k) first_signatures_[k].store(0, std::memory_order_relaxed);
  gave_up_.store(gave_up(), std::memory_order_relaxed);
  stale_after_.store(stale_after(), std::memory_order_relaxed);
  publish();
}

bool RunSession::concerns(std::uint64_t signature) const {
  if (engaged_.load(std::memory_order_relaxed) || watching_end_.load(std::memory_order_relaxed)) return true;
  for (std::size_t k = 0; k < kMaxRecordings; ++k) {
    const std::uint64_t v = first_signatures_[k].load(std::memory_order_relaxed);
    if (v == 0) return false;
    // (+ 1: this call, counted as on_call begins, is the first a rest's end lets wake the recording)
    const std::size_t calls = calls_.load(std::memory_order_relaxed);
    if (v == signature && calls + 1 >= begins_from_[k].load(std::memory_order_relaxed) &&
        (!after_host_point_only_[k].load(std::memory_order_relaxed) || follows_host_point(calls + 1))) {
      return true;
    }
  }
  return false;
}

bool RunSession::begins_a_recording(std::uint64_t signature) const {
  for (std::size_t k = 0; k < kMaxRecordings; ++k) {
    const std::uint64_t v = first_signatures_[k].load(std::memory_order_relaxed);
    if (v == 0) return false;
    if (v == signature) return true;
  }
  return false;
}

std::size_t RunSession::rest_looking(std::size_t tasks) {
  constexpr std::size_t kRestPerLook = 3;
  fruitless_looks_ = std::min(fruitless_looks_ + 1, kLongestLookRest);
  const std::size_t rest = kRestPerLook * fruitless_looks_ * tasks;
  ++look_rests_;
  look_rest_until_.store(calls_seen() + rest, std::memory_order_relaxed);
  requested_.store(false, std::memory_order_relaxed);  // asked again once the rest is over
  return rest;
}

bool RunSession::passed_by() {
  calls_.fetch_add(1, std::memory_order_relaxed);
  eager_since_begun_.fetch_add(1, std::memory_order_relaxed);
  return take_request();
}

bool RunSession::take_request() {
  if (requested_.load(std::memory_order_relaxed) || !wants_recording()) return false;
  if (requested_.exchange(true, std::memory_order_relaxed)) return false;
  if (left_loop_.exchange(false, std::memory_order_relaxed)) side_exit_looks_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

std::optional<SideExitWindow> RunSession::take_side_exit_window() {
  std::optional<SideExitWindow> out;
  out.swap(side_exit_window_);
  return out;
}

void RunSession::on_unreplayed_task(const std::string& what) {
  take_ended();  // (no call a side exit's recording could begin with)
  side_exit_window_.reset();
  calls_.fetch_add(1, std::memory_order_relaxed);  // as the window that may record it counts it
  if (!active_ && !plain_owner_) eager_since_begun_.fetch_add(1, std::memory_order_relaxed);
  on_host_visible_point(what);
}

std::vector<PrimerCall> RunSession::take_primer() {
  std::vector<PrimerCall> out;
  out.swap(primer_);
  return out;
}

// The program left recording r's iteration (r trusted, nothing else took over): it may have moved
// on to something short (an eval pass), which staleness would notice too late or never.
void RunSession::left_loop(const Recording& r, std::vector<PrimerCall> primer) {
  if (r.state != RecordingState::Replaying || options_.compare_block > 0) return;
  if (side_exit_looks_.load(std::memory_order_relaxed) >= options_.side_exit_looks) return;  // no look: no primer
  primer_ = std::move(primer);
  left_loop_.store(true, std::memory_order_relaxed);
}

Recording* RunSession::active() { return active_; }

std::optional<std::size_t> RunSession::library_site(const std::string& symbol) {
  if (!active_ || !active_->memo) return std::nullopt;
  const ShortCircuit& sc = *active_->short_circuit;
  if (!sc.armed() || sc.awaiting_iteration()) return std::nullopt;
  return active_->memo->site_at(sc.position(), symbol);
}

std::optional<OpPatches> whole_call_launches(const Recording& r, std::size_t site, std::size_t started) {
  const ShortCircuit& sc = *r.short_circuit;
  const LibrarySite& where = r.memo->sites().at(site);
  std::size_t end = where.first_op + where.ops;
  while (end < r.plan.ops.size() && r.plan.ops[end].kind == OpKind::Nop) ++end;
  if (!sc.armed() || sc.iterations_started() != started || sc.position() != end) return std::nullopt;
  const auto first = sc.patches().begin() + static_cast<std::ptrdiff_t>(where.first_op);
  return OpPatches(first, first + static_cast<std::ptrdiff_t>(where.ops));
}

bool RunSession::holding() const { return active_ && active_->short_circuit->holding(); }

bool RunSession::hold_free(std::function<void()> release) {
  if (!holding()) return false;
  held_frees_.push_back(std::move(release));
  ++frees_held_;
  return true;
}

std::size_t RunSession::release_dropped() {
  const std::size_t n = to_release_.size();
  for (Executor* e : to_release_) e->release();
  to_release_.clear();
  return n;
}

std::vector<std::function<void()>> RunSession::releasable_frees() {
  std::vector<std::function<void()>> out;
  if (!holding()) out.swap(held_frees_);
  return out;
}

bool RunSession::counts_plain(std::uint64_t signature) {
  if (!plain_owner_ || !counted_plain(signature, calls_seen() + 1)) {
    publish();
    return false;
  }
  take_ended();  // the program's own call: no exit to watch for
  calls_.fetch_add(1, std::memory_order_relaxed);
  publish();
  return true;
}

Action RunSession::on_call(std::uint64_t signature, GpuCall call) {
  calls_.fetch_add(1, std::memory_order_relaxed);
  const auto* copy = std::get_if<CopyCall>(&call);
  // A read of results by the host: the call after it comes after a host point.
  struct HostRead {
    RunSession& s;
    bool is;
    ~HostRead() {
      if (is) s.host_point_at_.store(s.calls_seen(), std::memory_order_relaxed);
    }
  } host_read{*this, copy && copy->direction == CopyDirection::DtoH};
  Recording* ended = take_ended();
  side_exit_window_.reset();  // (asked for by this call only)
  if (plain_owner_ && counted_plain(signature, calls_seen())) {
    publish();
    return Action::Run;
  }
  Action action = Action::Run;
  if (active_) {
    Recording& r = *active_;
    const std::size_t matched = r.short_circuit->matched_in_iteration();
    // Where r's side exit begins, the call may be its first: kept for it (a copy only there).
    std::optional<GpuCall> spare;
    if (side_exit_at(r, matched, signature)) spare = call;
    const std::size_t failed = failures(r);
    action = through(r, std::move(call));
    if (auto fs = r.short_circuit->take_false_start()) {
      action = after_false_start(r, signature, std::move(*fs));
    } else if (failures(r) > failed && !r.short_circuit->armed() && active_ == &r) {
      active_ = nullptr;
      action = exited(r, {index_of(r), matched, signature}, std::move(spare), action);
    }
  } else if (ended && replays(*ended) && reads_between(*ended, call)) {
    // A host read between two iterations (however many the program makes): it has not left.
    ended_ = ended;
    watching_end_.store(true, std::memory_order_relaxed);
  } else if (ended && replays(*ended)) {
    // The call after a completed iteration: if it begins nothing, the program left at the end.
    const std::size_t matched = ended->short_circuit->matched_in_iteration();
    std::optional<GpuCall> spare;
    if (side_exit_at(*ended, matched, signature)) spare = call;
    action = offer(signature, std::move(call));
    if (!active_ && action == Action::Run && !plain_owner_) {
      action = exited(*ended, {index_of(*ended), matched, signature}, std::move(spare), action, {}, true);
    }
  } else {
    action = offer(signature, std::move(call));
  }
  began_by_plain_block_ = false;
  settle();
  if (action == Action::Run && !active_ && !plain_owner_) eager_since_begun_.fetch_add(1, std::memory_order_relaxed);
  publish();
  return action;
}

// active_ is the recording in the middle of an iteration. One whose iteration is complete waits,
// armed, for its next call like every other recording (it counts the iteration then); at the
// end of a replayed block of a trial or --compare, the next iterations are the program's own.
void RunSession::settle() {
  if (!active_) return;
  Recording& r = *active_;
  if (!r.short_circuit->armed()) {
    active_ = nullptr;
    return;
  }
  if (!r.short_circuit->awaiting_iteration()) return;
  active_ = nullptr;
  r.completed_at = calls_seen();
  host_point_at_.store(calls_seen(), std::memory_order_relaxed);  // the next call follows a recorded iteration's end
  r.rank = ++rank_clock_;
  eager_since_begun_.store(0, std::memory_order_relaxed);  // the program still runs a recorded iteration
  requested_.store(false, std::memory_order_relaxed);
  left_loop_.store(false, std::memory_order_relaxed);
  primer_.clear();
  if (recheck_if_due(r)) return;
  if (!r.exit_of && options_.side_exits && options_.compare_block == 0 && r.state == RecordingState::Replaying) {
    ended_ = &r;
    watching_end_.store(true, std::memory_order_relaxed);
  }
  if (r.warmup_left > 0 && r.state == RecordingState::Trial) {
    if (!warmed_up_moving(r) && r.warmup_left == 0) {
      plain_block_or_wait(r);  // warmed up: the trial begins with a block of the program's own iterations
    }
    return;
  }
  if (r.warmup_left > 0 || !r.comparison || !replays(r) || !measuring(r)) return;
  if (r.plain_at_next && r.call_signatures.size() <= calls_to_tell_apart(r)) {
    // A recording added since shares as many calls as it has: no iteration of it can be told
    // apart before it ends. The block begins after this one.
    r.plain_at_next = false;
    r.plain_after_this = true;
  }
  if (r.plain_after_this && r.comparison->phase() == Phase::Replay) {
    r.plain_after_this = false;
    start_plain_block(r);
    return;
  }
  if (r.comparison->phase() == Phase::Replay && r.comparison->block_done() && !r.plain_at_next) plain_block_or_wait(r);
}

bool RunSession::shares_first_call(const Recording& r) const {
  return std::any_of(recordings_.begin(), recordings_.end(), [&](const auto& other) {
    return other.get() != &r && could_begin(*other, r.first_signature);
  });
}

bool RunSession::runs_anothers_iteration(const Recording& failed, std::size_t matched, std::uint64_t next,
                                         const std::vector<const Recording*>& tried) const {
  const auto& calls = failed.call_signatures;
  if (calls.size() < matched) return false;  // (not known call by call)
  return std::any_of(recordings_.begin(), recordings_.end(), [&](const auto& other) {
    const auto& theirs = other->call_signatures;
    return other->state == RecordingState::Resting && std::find(tried.begin(), tried.end(), other.get()) == tried.end() &&
           !other->exit_of &&
           theirs.size() > matched && std::equal(calls.begin(), calls.begin() + static_cast<long>(matched), theirs.begin()) &&
           theirs[matched] == next;
  });
}

// Plain iterations are checked call by call against the recording's (the program runs something
// else that begins alike: a training step after an eval pass), unless that kept failing (calls
// the hooks count differently from the window they were recorded in, say): then, as before the
// check existed, they are counted by their first call.
bool RunSession::verifies_plain(const Recording& r) const {
  constexpr std::size_t kMismatchesBeforeCounting = 8;
  return !r.call_signatures.empty() && r.plain_mismatches < kMismatchesBeforeCounting;
}

// How many of its calls an iteration of r must have matched before it cannot be another live
// recording's that begins alike: one more than the longest first calls they share.
std::size_t RunSession::calls_to_tell_apart(const Recording& r) const {
  std::size_t shared = 1;
  for (const auto& other : recordings_) {
    if (other.get() == &r || !could_begin(*other, r.first_signature)) continue;
    const auto& a = r.call_signatures;
    const auto& b = other->call_signatures;
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    shared = std::max(shared, n);
  }
  return shared + 1;
}

// The next calls would be the program's own, counted as this recording's iterations. When another
// recording begins with the same call, the next call that could begin this one may begin that one
// instead: the block waits for an iteration of this recording that has begun (calls_to_tell_apart
// of its calls matched), and takes it over (through()).
void RunSession::plain_block_or_wait(Recording& r) {
  if (verifies_plain(r) && r.call_signatures.size() > calls_to_tell_apart(r) && shares_first_call(r)) {
    r.plain_at_next = true;
    return;
  }
  start_plain_block(r);
}

void RunSession::start_plain_block(Recording& r) {
  r.comparison->switch_phase();
  plain_owner_ = index_of(r);
  // The next call, if it is the first, begins an iteration (after the reads between, if any).
  plain_calls_ = plain_length(r) - r.end_reads;
}

bool RunSession::measuring(const Recording& r) const {
  return r.state == RecordingState::Trial || options_.compare_block > 0;
}

std::size_t RunSession::index_of(const Recording& r) const {
  for (std::size_t i = 0; i < recordings_.size(); ++i) {
    if (recordings_[i].get() == &r) return i;
  }
  throw std::logic_error("a recording this session does not hold");
}

// No iteration under way: the live recordings whose first call this could be, most recently
// successful first, each in turn until one arms.
Action RunSession::offer(std::uint64_t signature, GpuCall&& call) {
  std::vector<Recording*> candidates;
  for (auto& r : recordings_) {
    if (r->state == RecordingState::Resting && r->first_signature == signature) wake_if_rested(*r);
    if (could_begin(*r, signature) && may_begin_here(*r)) candidates.push_back(r.get());
  }
  // Highest rank first: a recording that completed an iteration moves to the front, one that
  // failed to the back, so recordings sharing their first calls (a training and an eval step)
  // each get their turn when the program switches between them.
  std::stable_sort(candidates.begin(), candidates.end(), [](const Recording* a, const Recording* b) { return a->rank > b->rank; });
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Recording& r = *candidates[i];
    // Another candidate still to try needs the call too.
    GpuCall offered = i + 1 < candidates.size() ? call : std::move(call);
    const Action action = through(r, std::move(offered));
    if (r.short_circuit->armed()) {  // this call began one of its iterations
      active_ = &r;
      return action;
    }
    // Taken, then issued by nimble when the recording was dropped on this very call: it ran.
    if (action == Action::Deferred) return action;
  }
  return Action::Run;
}

namespace {

// Whether recording `r` can take over the calls `fs` matched: its first ops run in the program
// exactly where those did (a call that ran is not run again, one that is held is not run by the
// program), and matching all but the last launches none of its graphs (so a mismatch among them
// hands them back again, untouched).
bool can_take_over(const Recording& r, const FalseStart& fs) {
  std::size_t i = 0;
  for (const Op& op : r.plan.ops) {
    if (i == fs.matched.size()) break;
    if (op.kind == OpKind::Nop) continue;
    if (runs_in_program(op) != fs.matched[i].ran) return false;
    ++i;
  }
  return i == fs.matched.size() && !r.short_circuit->launches_within(fs.matched.size() - 1);
}

}  // namespace

// `failed` matched fs.matched, and fs.next did not follow, before any of its graphs was launched.
// The same calls may begin another recording's iteration (a training and an eval step that begin
// with the same input copies): they go to the others whose first call it could be, most recently
// successful first, so that no iteration is lost at the switch. When none takes them they run as
// the program made them, in order.
Action RunSession::after_false_start(Recording& failed, std::uint64_t signature, FalseStart fs) {
  active_ = nullptr;
  struct Let { Recording* recording; std::string why; bool first_only; };
  std::vector<Let> let_go = {{&failed, fs.mismatch, fs.first_only()}};  // on the way, in turn
  std::vector<const Recording*> tried = {&failed};
  std::size_t done = 0;  // fs.matched[0, done) were executed by a recording that gave up on them
  while (done == 0) {
    Recording* next = nullptr;
    for (auto& r : recordings_) {
      if (!could_begin(*r, failed.first_signature)) continue;
      if (std::find(tried.begin(), tried.end(), r.get()) != tried.end() || !can_take_over(*r, fs)) continue;
      if (r->begins_after_host_point && !failed.began.after_host_point) continue;  // (mid-step, for it)
      if (!next || r->rank > next->rank) next = r.get();
    }
    if (!next) break;
    tried.push_back(next);
    ShortCircuit& sc = *next->short_circuit;
    taking_over_ = failed.began;  // no plain block may take its iteration over while it is fed
    bool fed = true;
    for (std::size_t i = 0; i < fs.matched.size(); ++i) {
      const Action a = through(*next, GpuCall(fs.matched[i].call));  // held by it, or taken as run (it ran)
      if (sc.handing_back()) break;
      if (sc.armed()) continue;
      // It let go of its iteration without handing the calls back (dropped when a launch failed):
      // what it held went out; this call too if it had taken it. Nothing of it, at the first call:
      // not its iteration after all.
      done = i + (a == Action::Deferred ? 1 : 0);
      fed = false;
      break;
    }
    taking_over_.reset();
    if (sc.handing_back()) {  // a mismatch among them: the same calls back
      const FalseStart again = *sc.take_false_start();
      let_go.push_back({next, again.mismatch, again.first_only()});
      continue;
    }
    if (!fed) continue;  // (done > 0 ends the search)
    const std::size_t failed_before = failures(*next);
    const Action action = through(*next, GpuCall(fs.next));
    if (auto again = sc.take_false_start()) {  // it did not follow either: the same calls back
      let_go.push_back({next, again->mismatch, again->first_only()});
      continue;
    }
    for (const Let& l : let_go) {
      ++l.recording->false_starts_taken_over;  // a switch, not a failure
      not_its_iteration(*l.recording);
    }
    // (Its iteration may have become a plain one of its trial: then nothing is under way.)
    active_ = sc.armed() ? next : nullptr;
    if (!sc.armed() && failures(*next) > failed_before) left_loop(*next);  // it fell back right away
    return action;
  }
  // None of the live ones took them, but the program ran a resting recording's iteration: a switch,
  // as a take-over is, not a failure of the ones that let go.
  const bool switched = runs_anothers_iteration(failed, fs.matched.size(), signature, tried);
  // `failed` having replayed whole iterations: the program runs one no recording holds yet. Judged
  // after its side exits, which may take the mismatch (then it counts there).
  const bool failed_switched = !switched && replayed_whole(failed);
  for (const Let& l : let_go) {
    ShortCircuit& sc = *l.recording->short_circuit;
    not_its_iteration(*l.recording);
    if (switched) {
      ++l.recording->false_starts_taken_over;
    } else {
      if (l.first_only) {
        sc.explain_false_start(l.why);
      } else {
        sc.count_as_fall_back(l.why);
      }
      // It has been the program's iteration, and nothing of it was launched: the program runs one
      // no recording holds yet (batches padded to three lengths, drawn at random: each recording
      // would fail on the other two's until they were recorded too, and be dropped first). A false
      // start or fall-back, with its reason, but no failure.
      const bool switch_to_unrecorded = l.recording == &failed ? failed_switched : replayed_whole(*l.recording);
      if (l.recording != &failed && switch_to_unrecorded) ++l.recording->switches_to_unrecorded;
      if (!switch_to_unrecorded) count_mismatch(*l.recording);
    }
    if (l.recording != &failed || !failed_switched) after_failures(*l.recording);
  }
  dropping_on_failure(failed, [&] {
    for (std::size_t i = done; i < fs.matched.size(); ++i) {
      if (!fs.matched[i].ran) failed.executor->issue(fs.matched[i].op, fs.matched[i].call);
    }
  });
  const bool next_is_kernel = std::holds_alternative<KernelCall>(fs.next);
  const ExitSite site{index_of(failed), fs.matched.size(), signature};
  // (Switched: no exit of `failed`'s; its side exit there would replay the other's iteration as its
  // own, trusted, while that one rests untrusted.)
  if (!switched && failed.state == RecordingState::Replaying && side_exit_at(failed, site.after_calls, signature)) {
    return exited(failed, site, std::move(fs.next), Action::Run);  // the stretch from here was recorded
  }
  if (failed_switched) {
    ++failed.switches_to_unrecorded;
    after_failures(failed);
  }
  const Action action = offer(signature, std::move(fs.next));
  if (active_ || switched) return action;
  // What the program ran when it left: the recording's calls it matched, then this one.
  std::vector<PrimerCall> primer;
  for (std::size_t i = 0; i < fs.matched.size(); ++i) {
    const std::uint64_t sig = i < failed.call_signatures.size() ? failed.call_signatures[i] : (i ? 0 : failed.first_signature);
    if (sig) primer.push_back({sig, std::holds_alternative<KernelCall>(fs.matched[i].call)});
  }
  primer.push_back({signature, next_is_kernel});
  return exited(failed, site, std::nullopt, action, std::move(primer));
}

std::size_t RunSession::plain_length(const Recording& r) const {
  return verifies_plain(r) ? r.call_signatures.size() : r.calls + r.end_reads;
}

bool RunSession::reads_between(const Recording& r, const GpuCall& call) const {
  const auto* copy = std::get_if<CopyCall>(&call);
  return r.end_reads > 0 && copy && copy->direction == CopyDirection::DtoH;
}

// Left in the first quarter of its calls, where a replayed iteration launches nothing yet: no side
// trace of the parent's iteration but another iteration that begins alike (an inference service's
// other batch lengths left a 130-call recording after its first call, and their side exits, trusted
// untried, replayed at 0.91-0.94 of plain while the parent gained: H200, 2026-11-30). The parent's
// trial says nothing of such a stretch: the automatic range may find it as an iteration of its own,
// tried like any other.
bool RunSession::begins_alike(const Recording& parent, const ExitSite& site) const {
  return told_apart_early(parent, site.after_calls, parent.calls);
}

// `matched` calls of an iteration `length` calls long matched r before the program went another
// way: within its first quarter, and before a replayed iteration would have launched anything.
bool RunSession::told_apart_early(const Recording& r, std::size_t matched, std::size_t length) const {
  return 4 * matched < length && !r.short_circuit->launches_within(matched);
}

Recording* RunSession::side_exit_at(const Recording& parent, std::size_t after_calls, std::uint64_t signature) {
  for (auto& r : recordings_) {
    const std::optional<ExitSite>& at = r->exit_of;
    if (at && at->after_calls == after_calls && at->signature == signature && replays(*r) &&
        recordings_[at->recording].get() == &parent) {
      return r.get();
    }
  }
  return nullptr;
}

Recording* RunSession::take_ended() {
  watching_end_.store(false, std::memory_order_relaxed);
  return std::exchange(ended_, nullptr);
}

// A recorded iteration begins: the stretch since an exit ends (SideExits measures it). A side
// exit's own iteration continues its parent's, which the exit left.
void RunSession::iteration_began_at_call(const Recording& r) {
  if (!r.exit_of) side_exits_.iteration_began(calls_seen());
}

// The program left `parent`'s iteration at `site`, with a call nothing took yet (it runs it unless
// `spare` goes to the recording of that exit). A trusted parent's exit taken alike often enough
// gets that recording: the hooks record the stretch from this call (take_side_exit_window).
// Otherwise the program may have moved on (left_loop).
Action RunSession::exited(Recording& parent, const ExitSite& site, std::optional<GpuCall> spare, Action action,
                          std::vector<PrimerCall> primer, bool at_end) {
  const bool trusted = parent.state == RecordingState::Replaying && options_.compare_block == 0 && !parent.exit_of;
  if (!trusted || !options_.side_exits || (!at_end && begins_alike(parent, site))) {
    if (!at_end) left_loop(parent, std::move(primer));
    return action;
  }
  if (Recording* side = side_exit_at(parent, site.after_calls, site.signature); side && spare) {
    const Action taken = through(*side, std::move(*spare));
    if (side->short_circuit->armed()) {
      active_ = side;
      if (!at_end) ++parent.fallbacks_to_side_exits;
      return taken;
    }
    // Taken, then issued by nimble when it was dropped on this very call (its launch failed): it ran.
    if (taken == Action::Deferred) return taken;
    // Not its first call after all (its launch shape changed, say): the program runs it. One whose
    // first call keeps missing is dropped, and the exit may be measured and recorded anew.
    if (++side->missed_entries >= options_.failure_limit && side->missed_entries > side->short_circuit->summary().iterations_replayed) {
      drop(*side, "its first call did not match where its recording leaves, " + std::to_string(side->missed_entries) + " times");
    }
  } else if (!side) {
    if (action != Action::Run) return action;  // the call was taken: no stretch begins with it
    std::size_t side_exits = 0;
    for (const auto& r : recordings_) side_exits += r->exit_of && r->state != RecordingState::Dropped;
    std::optional<SideExitWindow> window;
    if (side_exits < options_.max_recordings) window = side_exits_.exited(site, calls_seen());
    if (window) {
      window->of = parent.name;
      side_exit_window_ = std::move(window);
      return action;  // recorded from this call: no look
    }
  }
  if (!at_end) left_loop(parent, std::move(primer));
  return action;
}

// `call` to recording `r`'s short-circuit, with what that means for its timings and its fate.
Action RunSession::through(Recording& r, GpuCall&& call) {
  ShortCircuit& sc = *r.short_circuit;
  // Its previous iteration was replayed whole, and this is the very next call (after the calls
  // that come before its first, host functions the program runs itself). Taking over another
  // recording's false start, the iteration began at that one's first call.
  const std::size_t at_call = taking_over_ ? taking_over_->call : calls_seen();
  const bool previous_whole = sc.armed() && sc.awaiting_iteration() && at_call == r.completed_at + 1 + r.calls_before_first;
  const std::size_t started = sc.iterations_started();
  const std::size_t failed = failures(r);
  const std::size_t replayed = sc.summary().iterations_replayed;
  const Action action = dropping_on_failure(r, [&] { return sc.on_call(std::move(call)); });
  if (sc.summary().iterations_replayed > replayed) r.rank = ++rank_clock_;
  if (sc.iterations_started() > started) {
    r.began = taking_over_ ? *taking_over_ : IterationStart{at_call, clock_(), after_host_point()};
    iteration_began_at_call(r);
    r.last_begun = calls_seen();
    if (!began_by_plain_block_) iteration_began(r, previous_whole);
    began_by_plain_block_ = false;
  }
  if (failures(r) > failed) {
    std::int64_t lowest = r.rank;
    for (const auto& other : recordings_) lowest = std::min(lowest, other->rank);
    r.rank = lowest - 1;
    // A false start is after_false_start's to judge: another recording may take it over. (Where
    // the program goes after a fall-back is on_call's: RunSession::exited.)
    if (!sc.handing_back()) after_failures(r);
  }
  if (sc.stopped() && replays(r)) drop(r, "a segment could not be launched");
  // A plain block waiting for this recording's own iteration: this one is (it matched more of its
  // calls than any other recording shares). Nothing of it launched yet: the program issues it (its
  // held calls go out first, in order), timed. A graph of it launched already: the block begins
  // after it.
  if (r.plain_at_next && !taking_over_ && measuring(r) && replays(r) &&
      !sc.awaiting_iteration() && sc.matched_in_iteration() >= calls_to_tell_apart(r)) {
    r.plain_at_next = false;
    const std::size_t matched = sc.matched_in_iteration();
    if (!dropping_on_failure(r, [&] { return sc.release(); })) {
      r.plain_after_this = true;
      return action;
    }
    r.comparison->switch_phase();  // (resuming a block that another recording's iteration cut)
    r.comparison->iteration_began(r.began.ns, false);
    plain_owner_ = index_of(r);
    plain_calls_ = matched;
    active_ = nullptr;
    return action;  // held: issued by release(), in order; run in place (a host copy): the program's
  }
  return action;
}

// A mismatch of r before any of its graphs launched, which is a failure: one within an iteration's
// worth of calls of the last one counted is the same iteration of the program's, met again (the
// recording's first call recurs inside the program's steps).
void RunSession::count_mismatch(Recording& r) {
  if (r.mismatch_counted_at > 0 && calls_seen() < r.mismatch_counted_at + r.calls) {
    ++r.mismatches_in_one_iteration;
  } else {
    r.mismatch_counted_at = calls_seen();
  }
}

void RunSession::after_failures(Recording& r) {
  const ShortCircuitSummary& s = r.short_circuit->summary();
  const std::size_t n = failures(r);
  if (n < options_.failure_limit || n <= s.iterations_replayed) return;
  const std::string last = most_frequent_failure(s);
  drop(r, "kept falling back: " + std::to_string(n) + " fall-backs and false starts, " +
              std::to_string(s.iterations_replayed) + " iterations replayed" + (last.empty() ? "" : "; most often: " + last));
}

std::string RunSession::side_exit_text(const Recording& r) const {
  if (!r.exit_of || r.exit_of->recording >= recordings_.size()) return "";
  return "side exit of " + recordings_[r.exit_of->recording]->name + " after " + std::to_string(r.exit_of->after_calls) +
         " of its calls (trusted as it is)";
}

// The plain block's calls: counted until the recorded iteration begins again. True: the call
// is the program's (runs as it is); false: the block has ended and the call is for replay. `call`:
// its number among the calls seen (the hooks count a plain block's call after asking).
bool RunSession::counted_plain(std::uint64_t signature, std::size_t call) {
  Recording& r = *recordings_[*plain_owner_];
  Comparison& c = *r.comparison;
  ++plain_calls_;
  const bool verify = verifies_plain(r);
  const std::size_t length = plain_length(r);
  // An iteration of r may begin with this call (where r's first call recurs inside the steps, only
  // right after a host point, as a replayed one).
  const bool begins = signature == r.first_signature && may_begin_at(r, call);
  // Fewer host reads between two iterations than recorded: the next one begins.
  const bool begins_early = plain_calls_ > length - r.end_reads && begins;
  if (plain_calls_ <= length && begins_early) {
    plain_calls_ = length + 2;  // the last one not whole
  } else if (plain_calls_ <= length) {
    if (!verify || signature == r.call_signatures[plain_calls_ - 1]) return true;
    const std::size_t matched = plain_calls_ - 1;
    if (!shares_first_call(r) && told_apart_early(r, matched, length)) {
      // Told apart in its first calls, where a replayed iteration would have launched nothing yet
      // (a false start): an iteration no recording holds (an inference service's batch of a length
      // not recorded). No iteration of r's, nor evidence that r's own vary (as a call that comes
      // among them late is: JAX's transfer threads' copies); the block goes on with the next one.
      not_its_iteration(r);
      plain_calls_ = length + 2;  // between iterations
      return true;
    }
    if (!shares_first_call(r)) {
      // Not its iteration, and no other recording's either: the program runs it anyway. The block
      // goes on with the next iteration; this one is not timed (counted, in a row).
      ++r.plain_mismatches;
      ++r.plain_unlike;
      plain_calls_ = length + 2;  // between iterations, the last one not whole
      return true;
    }
    // Another recording's iteration that begins alike (a training step after this eval step): no
    // iteration of this one. The block is cut, and goes on with the next iteration of its own; the
    // call goes to the short-circuits.
    not_its_iteration(r);
    c.cut_block();
    plain_owner_.reset();
    // Told apart mid-iteration: the next one of its own is taken over; else (no iteration of it
    // can be, before it ends) the block begins after the next one completes.
    (r.call_signatures.size() > calls_to_tell_apart(r) ? r.plain_at_next : r.plain_after_this) = true;
    return false;
  }
  if (!begins) {
    if (plain_calls_ <= 4 * length) return true;
    c.switch_phase();  // never found the iteration's start again: leave it to the short-circuits
    plain_owner_.reset();
    return false;
  }
  const bool previous_whole = plain_calls_ == length + 1;
  if (previous_whole && verify) r.plain_mismatches = 0;
  plain_calls_ = 1;
  iteration_began_at_call(r);
  r.last_begun = calls_seen();
  eager_since_begun_.store(0, std::memory_order_relaxed);
  if (c.block_done() || !measuring(r)) {
    // This iteration is to be replayed: it is timed from here, and the trial may decide first.
    c.switch_phase();
    plain_owner_.reset();
    begin_timed(r, clock_(), previous_whole, work_since_last_start(r));
    if (!replays(r)) return true;  // dropped or resting: the program goes on by itself
    began_by_plain_block_ = true;  // its short-circuit arms on this call; the start is counted
    return false;
  }
  // (The trial may decide: dropped, the block ends and the program goes on; or trusted, replay now.)
  begin_timed(r, clock_(), previous_whole, work_since_last_start(r));
  if (r.state != RecordingState::Replaying || options_.compare_block > 0) return true;
  c.switch_phase();
  plain_owner_.reset();
  began_by_plain_block_ = true;
  return false;
}

void RunSession::on_skipped_call(const std::vector<std::vector<ArgPatch>>& patches) {
  if (!active_) throw std::logic_error("a skipped library call with no recorded iteration under way");
  Recording& r = *active_;
  dropping_on_failure(r, [&] { r.short_circuit->on_skipped_call(patches); });
  settle();
  publish();
}

void RunSession::on_host_visible_point(const std::string& what) {
  if (!active_) return;
  Recording& r = *active_;
  const std::size_t failed = failures(r);
  dropping_on_failure(r, [&] { r.short_circuit->on_host_visible_point(what); });
  if (failures(r) > failed) {
    after_failures(r);
    left_loop(r);
  }
  settle();
  publish();
}

void RunSession::interrupt(const std::string& why) {
  for (auto& r : recordings_) {
    if (r->state == RecordingState::Dropped) continue;
    r->short_circuit->abandon(why);  // throws only when issuing a held-back call failed
    r->completed_at = 0;             // the next iteration does not follow a whole one
    if (r->comparison && r->comparison->phase() == Phase::Plain) r->comparison->switch_phase();
  }
  active_ = nullptr;
  plain_owner_.reset();
  side_exits_.abandon();  // the stretch under way is not measured whole
  side_exit_window_.reset();
  take_ended();
  publish();
}

void RunSession::finish(const std::string& why) {
  for (auto& r : recordings_) {
    try {
      r->short_circuit->finish(why);
    } catch (const std::exception&) {
      // finish() issues what was held back; a failure there was reported by the executor.
    }
  }
  active_ = nullptr;
  plain_owner_.reset();
  publish();
}

GuardAction RunSession::guard_tick(std::size_t program_calls, bool hooks_quiet, bool hooks_may_pause, bool at_host_point) {
  GuardView view{.calls = program_calls, .ns = clock_(), .at_host_point = at_host_point};
  bool on_trial = false;
  for (const auto& r : recordings_) {
    if (r->state == RecordingState::Dropped) continue;
    on_trial = on_trial || r->state == RecordingState::Trial;
    // Something trusted has replayed a few iterations: what it does to the program can be judged.
    view.replaying = view.replaying ||
                     (r->state == RecordingState::Replaying && r->short_circuit->summary().iterations_replayed >= 4);
    view.longest_iteration = std::max(view.longest_iteration, plain_length(*r));
  }
  // Not beside a trial: its plain blocks and warm-up would be counted against replay (judged with
  // its trial, BERT training, a 1.1x program, read 0.75 and stepped aside on the H200).
  view.settled = hooks_quiet && !on_trial;
  view.can_switch = !active_ && !plain_owner_ && hooks_may_pause;
  const GuardAction action = guard_.tick(view);
  if (action == GuardAction::Pause) interrupt("the process guard paused nimble run");
  if (action == GuardAction::StepAside) finish("nimble run stepped aside");
  if (action == GuardAction::Resume && at_host_point) host_synchronized();  // the next call may begin a step
  return action;
}

void RunSession::drop(Recording& r, const std::string& why) {
  if (r.state == RecordingState::Dropped) return;
  r.state = RecordingState::Dropped;
  r.dropped_because = why;
  r.resting_because.clear();
  if (!r.exit_of) ++dropped_;  // (a side exit's recording is no recorded iteration the search gave up on)
  stop_replaying(r, "the recording was dropped: " + why);
  if (r.executor) to_release_.push_back(r.executor.get());  // never launched again
  // Its side exits can no longer be entered: their graphs go with it.
  const std::size_t parent = index_of(r);
  for (auto& other : recordings_) {
    if (other->exit_of && other->exit_of->recording == parent) drop(*other, "the recording it is a side exit of was dropped");
  }
}

// What is held back goes out (a fall-back for this `reason` when an iteration was under way);
// nothing of r arms again (until a resting one is tried again).
void RunSession::stop_replaying(Recording& r, const std::string& reason) {
  if (active_ == &r) active_ = nullptr;
  if (ended_ == &r) take_ended();
  try {
    r.short_circuit->finish(reason);
  } catch (const std::exception&) {
    // finish() issues what was held back; a failure there was reported by the executor.
  }
  if (plain_owner_ == index_of(r)) plain_owner_.reset();
  publish_recordings();
}

std::size_t RunSession::replayed_so_far() const {
  std::size_t n = 0;
  for (const auto& r : recordings_) n += r->short_circuit->replayed_so_far();
  return n;
}

std::size_t RunSession::segments_launched() const {
  std::size_t n = 0;
  for (const auto& r : recordings_) n += r->short_circuit->summary().segments_launched;
  return n;
}

std::size_t RunSession::iterations_replayed() const {
  std::size_t n = 0;
  for (const auto& r : recordings_) n += r->short_circuit->summary().iterations_replayed;
  return n;
}

std::string RunSession::summary_text() const {
  std::ostringstream out;
  for (const auto& r : recordings_) {
    out << "nimble run: recording " << r->name << " (" << r->calls << " calls): " << state_name(r->state);
    char text[64];
    for (std::size_t i = 0; i < r->earlier_trials.size(); ++i) {
      std::snprintf(text, sizeof text, "%.2fx", r->earlier_trials[i]);
      out << (i ? ", " : " (earlier trials: ") << (r->earlier_trials[i] > 0 ? text : "not timed")
          << (i + 1 == r->earlier_trials.size() ? ")" : "");
    }
    if (r->trial_speedup) {
      std::snprintf(text, sizeof text, ", trial %.2fx", *r->trial_speedup);
      out << text;
    }
    if (r->exit_of) out << ", " << side_exit_text(*r);
    if (r->state == RecordingState::Dropped) out << ": " << r->dropped_because;
    if (r->state == RecordingState::Resting) out << ": " << r->resting_because;
    if (const std::string undecided = undecided_trial(*r); !undecided.empty()) out << ": " << undecided;
    if (const std::string before = rest_untimed_text(*r); !before.empty()) out << "; " << before;
    out << "\n" << r->short_circuit->summary_text();
    if (r->fallbacks_to_side_exits) {
      out << "  (" << r->fallbacks_to_side_exits << " of the fall-backs went on in a side exit's recording)\n";
    }
    if (r->switches_to_unrecorded) {
      out << "  (" << r->switches_to_unrecorded
          << " of the false starts and fall-backs were the program running an iteration no recording holds: "
             "no failures)\n";
    }
    if (r->mismatches_in_one_iteration) {
      out << "  (" << r->mismatches_in_one_iteration
          << " of the false starts and fall-backs came within one iteration's worth of calls of another: counted "
             "with it, as one failure)\n";
    }
  }
  out << guard_.summary_text();
  return out.str();
}

}  // namespace nimble::replayer
