#include "nimble/replayer/short_circuit.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>
#include <stdexcept>

namespace nimble::replayer {

std::vector<Segment> segments_of(const ReplayPlan& plan, std::size_t max_ops, const std::vector<std::size_t>& breaks) {
  std::vector<Segment> segments;
  std::size_t begin = 0;
  auto close = [&](std::size_t end) {
    if (end > begin) segments.push_back({begin, end, false});
    begin = end;
  };
  const std::set<std::size_t> break_at(breaks.begin(), breaks.end());
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    if (break_at.count(i)) close(i);
    const Op& op = plan.ops[i];
    if (runs_in_program(op)) {
      close(i);
      segments.push_back({i, i + 1, true});
      begin = i + 1;
      continue;
    }
    if (op.kind == OpKind::Nop || (max_ops > 0 && i + 1 - begin >= max_ops)) close(i + 1);
  }
  close(plan.ops.size());
  return segments;
}

GpuCall recorded_call(const Op& op, const std::vector<ArgPatch>& patches) {
  if (op.kind == OpKind::Graph) return GraphLaunchCall{op.graph_exec, op.program_stream};
  const std::vector<std::uint8_t> bytes = with_patches(recorded_parameters(op), patches);
  auto word = [&](std::size_t at, std::size_t size) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + at, size);
    return v;
  };
  if (op.kind == OpKind::Kernel) {
    const KernelOp& k = op.kernel;
    return KernelCall{k.function, {k.grid[0], k.grid[1], k.grid[2]}, {k.block[0], k.block[1], k.block[2]}, k.shared_mem,
                      bytes, op.program_stream};
  }
  if (op.kind == OpKind::Memset) {
    const MemsetOp& m = op.memset;
    return MemsetCall{word(kMemsetDestination, 8), static_cast<std::uint32_t>(word(0, 4)), m.element_size, m.width,
                      m.height, m.pitch, op.program_stream};
  }
  return CopyCall{op.copy.direction, word(kCopySource, 8), word(kCopyDestination, 8), op.copy.bytes, op.program_stream};
}

ShortCircuit::ShortCircuit(const ReplayPlan& plan, std::vector<Segment> segments, IsDevicePointer is_device_pointer,
                           Executor& executor, ArgumentRule rule)
    : plan_(plan), executor_(executor), matcher_(plan, std::move(is_device_pointer), rule), segments_(std::move(segments)) {}

CallCheck ShortCircuit::check(const GpuCall& call) {
  return std::visit([&](const auto& c) { return matcher_.next(c); }, call);
}

std::string most_frequent_failure(const ShortCircuitSummary& summary) {
  std::string reason;
  std::size_t most = 0;
  for (const auto* reasons : {&summary.fallbacks, &summary.false_start_reasons}) {
    for (const auto& [text, count] : *reasons) {
      if (count > most) most = count, reason = text;
    }
    if (most > 0) break;  // a fall-back's reason before a false start's
  }
  return reason;
}

Action ShortCircuit::try_arm(GpuCall&& call) {
  if (stopped_) return Action::Run;
  matcher_.reset();
  next_segment_ = 0;
  matched_ = 0;
  launched_in_iteration_ = 0;
  ran_.clear();
  const std::size_t op = matcher_.position();
  // Segments before the first op that does something hold only syncs or the nodes of the program's
  // graph (an iteration that begins with a sync or with the program's graph launch): nothing to
  // launch, and the segment bookkeeping must start at the op the call matches.
  while (next_segment_ < segments_.size() && segments_[next_segment_].end <= op) ++next_segment_;
  if (!check(call).matches) return Action::Run;  // not the start of the recorded iteration
  armed_ = true;
  ++iterations_started_;
  return accept(std::move(call), op);
}

Action ShortCircuit::on_call(GpuCall call) {
  if (!armed_) return try_arm(std::move(call));
  if (matcher_.complete()) {  // the iteration before was replayed whole: does another begin?
    ++summary_.iterations_replayed;
    armed_ = false;
    return try_arm(std::move(call));
  }
  const std::size_t op = matcher_.position();
  const CallCheck result = check(call);
  if (!result.matches) {
    if (hand_back_ && launched_in_iteration_ == 0) {
      // Nothing launched: every matched call is held back or ran in the program. The calls also
      // begin something else; the caller decides what runs them (take_false_start()).
      FalseStart fs;
      fs.matched = std::move(ran_);
      for (Deferred& d : end_iteration()) fs.matched.push_back({d.op, std::move(*d.call), false});
      std::sort(fs.matched.begin(), fs.matched.end(), [](const auto& a, const auto& b) { return a.op < b.op; });
      fs.next = std::move(call);
      fs.mismatch = result.mismatch;
      ++summary_.false_starts;
      handed_back_ = std::move(fs);
      return Action::Run;
    }
    // Only the first op matched and it is still held back: the call occurs elsewhere too.
    fall_back(result.mismatch, /*false_start=*/matched_ == 1 && deferred_.size() == 1 && next_segment_ == 0);
    return try_arm(std::move(call));  // the recorded iteration may start again right here
  }
  return accept(std::move(call), op);
}

bool has_work(const ReplayPlan& plan, const Segment& segment) {
  for (std::size_t op = segment.begin; op < segment.end; ++op) {
    if (plan.ops[op].kind != OpKind::Nop) return true;
  }
  return false;
}

bool ShortCircuit::launches_within(std::size_t calls) const {
  std::size_t matchable = 0;  // calls that match ops up to the segment's end
  std::size_t op = 0;
  for (const Segment& s : segments_) {
    for (; op < s.end; ++op) matchable += plan_.ops[op].kind != OpKind::Nop;
    if (matchable > calls) return false;
    if (!s.program_runs && has_work(plan_, s)) return true;  // launched once its last call matched
  }
  return false;
}

void ShortCircuit::count_as_fall_back(const std::string& reason) {
  if (summary_.false_starts > 0) --summary_.false_starts;
  count_fall_back(reason);
}

void ShortCircuit::count_fall_back(const std::string& reason) {
  ++summary_.fallbacks[reason];
  ++summary_.fallbacks_total;
}

void ShortCircuit::explain_false_start(const std::string& reason) { ++summary_.false_start_reasons[reason]; }

std::optional<FalseStart> ShortCircuit::take_false_start() {
  std::optional<FalseStart> out;
  out.swap(handed_back_);
  return out;
}

// `call` matched recorded op `op`.
Action ShortCircuit::accept(GpuCall&& call, std::size_t op) {
  ++matched_;
  Action action = Action::Deferred;
  if (runs_in_program(plan_.ops[op])) {
    // A host copy, a collective or a graph launch: everything before it is on the GPU (its
    // segment launched when its last call matched), so the program's own call runs now, in order.
    action = Action::Run;
    const OpKind kind = plan_.ops[op].kind;
    ++(kind == OpKind::Graph ? summary_.program_graphs : kind == OpKind::Kernel ? summary_.collectives : summary_.host_copies);
    if (hand_back_ && launched_in_iteration_ == 0) ran_.push_back({op, call, true});  // a false start hands it back, as run
  } else {
    deferred_.push_back({op, std::move(call)});
    ++summary_.calls_deferred;
  }
  launch_ready_segments();
  return action;
}

void ShortCircuit::launch_ready_segments() {
  while (armed_ && next_segment_ < segments_.size() && matcher_.position() >= segments_[next_segment_].end) {
    if (!segments_[next_segment_].program_runs) {
      try {
        executor_.launch_segment(next_segment_, matcher_);
      } catch (const std::exception& e) {
        stopped_ = failed_ = true;  // the deferred calls go out as the program made them; no more replay
        fall_back(std::string("a segment could not be launched, replay stopped: ") + e.what());
        return;
      }
      if (has_work(plan_, segments_[next_segment_])) {
        ++summary_.segments_launched;
        ++launched_in_iteration_;
        ran_.clear();  // no hand-back any more
      }
    }
    // Only this segment's calls are on the GPU now (a skipped library call may have brought
    // the next segment's too).
    const std::size_t end = segments_[next_segment_].end;
    deferred_.erase(std::remove_if(deferred_.begin(), deferred_.end(), [&](const Deferred& d) { return d.op < end; }),
                    deferred_.end());
    ++next_segment_;
  }
}

void ShortCircuit::on_skipped_call(const std::vector<std::vector<ArgPatch>>& patches) {
  // All of the call's ops are held first: if a launch then fails, the fall-back issues them all.
  for (const auto& p : patches) {
    if (!armed_ || matcher_.complete()) throw std::logic_error("a skipped library call outside a recorded iteration");
    deferred_.push_back({matcher_.position(), std::nullopt});
    matcher_.take(p);
    ++matched_;
    ++summary_.ops_of_skipped_calls;
  }
  launch_ready_segments();
}

void ShortCircuit::on_host_visible_point(const std::string& what) {
  if (!armed_ || deferred_.empty()) return;  // everything matched so far is on the GPU
  fall_back("the program " + what + " in the middle of a recorded segment");
}

void ShortCircuit::finish(const std::string& why) {
  if (armed_ && !deferred_.empty()) fall_back(why);
  if (armed_ && matcher_.complete()) ++summary_.iterations_replayed;
  armed_ = false;
  stopped_ = true;
}

bool ShortCircuit::resume() {
  if (failed_ || armed_) return false;
  stopped_ = false;
  return true;
}

void ShortCircuit::abandon(const std::string& why) {
  if (!armed_) return;
  if (matcher_.complete()) {
    ++summary_.iterations_replayed;
    armed_ = false;
    return;
  }
  fall_back(why);
}

bool ShortCircuit::release() {
  if (!armed_ || matcher_.complete() || launched_in_iteration_ > 0) return false;
  issue_held_calls();
  return true;
}

void ShortCircuit::fall_back(const std::string& reason, bool false_start) {
  if (false_start) {
    ++summary_.false_starts;
    explain_false_start(reason);
  } else {
    count_fall_back(reason);
  }
  issue_held_calls();
}

// The iteration under way is over: its held calls, in order, each with the call that does it (the
// ops of a skipped library call rebuilt from the recording and this iteration's patches).
std::vector<ShortCircuit::Deferred> ShortCircuit::end_iteration() {
  std::vector<Deferred> held;
  held.swap(deferred_);
  for (Deferred& d : held) {
    if (!d.call) d.call = recorded_call(plan_.ops[d.op], matcher_.patches()[d.op]);
  }
  armed_ = false;
  matcher_.reset();
  next_segment_ = 0;
  ran_.clear();
  return held;
}

// The launched segments did the recorded work of their calls; the rest runs as the program
// asked, in its order, and the iteration is over.
void ShortCircuit::issue_held_calls() {
  const std::vector<Deferred> pending = end_iteration();
  // Every call goes out even if one fails (the program would have issued them all); the first
  // failure is reported afterwards, and replay stops for good.
  std::string failure;
  for (const Deferred& d : pending) {
    try {
      executor_.issue(d.op, *d.call);
    } catch (const std::exception& e) {
      if (failure.empty()) failure = e.what();
    }
  }
  if (!failure.empty()) {
    stopped_ = failed_ = true;
    throw std::runtime_error("issuing a held-back call failed: " + failure);
  }
}

std::string ShortCircuit::summary_text() const {
  std::ostringstream out;
  const std::size_t replayed = replayed_so_far();
  out << "nimble run: " << replayed << " iteration(s) replayed (" << summary_.segments_launched
      << " segment launches, " << summary_.calls_deferred << " calls deferred, " << summary_.host_copies
      << " host copies run in place";
  if (summary_.program_graphs) out << ", " << summary_.program_graphs << " launches of the program's own graphs run in place";
  out << ")";
  const std::size_t fallbacks = summary_.fallbacks_total;
  out << "; " << fallbacks << " fall-back(s)";
  if (summary_.false_starts) out << ", " << summary_.false_starts << " false start(s)";
  out << (fallbacks ? ":" : "") << "\n";
  for (const auto& [reason, n] : summary_.fallbacks) out << "  " << n << "x " << reason << "\n";
  return out.str();
}

}  // namespace nimble::replayer
