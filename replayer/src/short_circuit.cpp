#include "nimble/replayer/short_circuit.hpp"

#include <sstream>

namespace nimble::replayer {

std::vector<Segment> segments_of(const ReplayPlan& plan, std::size_t max_ops) {
  std::vector<Segment> segments;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    const bool host_visible = op.kind == OpKind::Nop ||
                              (op.kind == OpKind::Copy && op.copy.direction == CopyDirection::DtoH);
    if (host_visible || (max_ops > 0 && i + 1 - begin >= max_ops) || i + 1 == plan.ops.size()) {
      segments.push_back({begin, i + 1});
      begin = i + 1;
    }
  }
  return segments;
}

ShortCircuit::ShortCircuit(const ReplayPlan& plan, std::vector<Segment> segments, IsDevicePointer is_device_pointer,
                           Executor& executor)
    : executor_(executor), matcher_(plan, std::move(is_device_pointer)), segments_(std::move(segments)) {}

CallCheck ShortCircuit::check(const GpuCall& call) {
  return std::visit([&](const auto& c) { return matcher_.next(c); }, call);
}

Action ShortCircuit::try_arm(const GpuCall& call) {
  matcher_.reset();
  next_segment_ = 0;
  if (!check(call).matches) return Action::Run;  // not the start of the recorded iteration
  armed_ = true;
  deferred_.push_back(call);
  ++summary_.calls_deferred;
  launch_ready_segments();
  return Action::Deferred;
}

Action ShortCircuit::on_call(const GpuCall& call) {
  if (!armed_) return try_arm(call);
  if (matcher_.complete()) {  // the iteration before was replayed whole: does another begin?
    ++summary_.iterations_replayed;
    armed_ = false;
    return try_arm(call);
  }
  const CallCheck result = check(call);
  if (!result.matches) {
    fall_back(result.mismatch);
    return try_arm(call);  // the recorded iteration may start again right here
  }
  deferred_.push_back(call);
  ++summary_.calls_deferred;
  launch_ready_segments();
  return Action::Deferred;
}

void ShortCircuit::launch_ready_segments() {
  while (next_segment_ < segments_.size() && matcher_.position() >= segments_[next_segment_].end) {
    executor_.launch_segment(next_segment_, matcher_);
    deferred_.clear();
    ++summary_.segments_launched;
    ++next_segment_;
  }
}

void ShortCircuit::on_host_visible_point(const std::string& what) {
  if (!armed_ || deferred_.empty()) return;  // everything matched so far is on the GPU
  fall_back("the program " + what + " in the middle of a recorded segment");
}

void ShortCircuit::fall_back(const std::string& reason) {
  // The launched segments did the recorded work of their calls; the rest runs as the program
  // asked, in its order.
  for (const GpuCall& call : deferred_) executor_.issue(call);
  deferred_.clear();
  ++summary_.fallbacks[reason];
  armed_ = false;
  matcher_.reset();
  next_segment_ = 0;
}

std::string ShortCircuit::summary_text() const {
  std::ostringstream out;
  const std::size_t replayed = summary_.iterations_replayed + (armed_ && matcher_.complete() ? 1 : 0);
  out << "nimble run: " << replayed << " iteration(s) replayed (" << summary_.segments_launched
      << " segment launches, " << summary_.calls_deferred << " calls deferred)";
  std::size_t fallbacks = 0;
  for (const auto& [reason, n] : summary_.fallbacks) fallbacks += n;
  out << "; " << fallbacks << " fall-back(s)" << (fallbacks ? ":" : "") << "\n";
  for (const auto& [reason, n] : summary_.fallbacks) out << "  " << n << "x " << reason << "\n";
  return out.str();
}

}  // namespace nimble::replayer
