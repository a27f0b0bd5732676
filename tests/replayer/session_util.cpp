#include "session_util.hpp"

#include <memory>

namespace nimble::replayer::test {

void LoggingExecutor::launch_segment(std::size_t segment, const IterationMatcher&) {
  log.lines.push_back(name + " launch " + std::to_string(segment));
  ++log.launches;
  if (log.execs_to_make > 0) --log.execs_to_make, ++log.execs;
  if (!log.writes_per_launch.empty()) {
    const std::size_t writes = log.writes_per_launch[(log.launches - 1) % log.writes_per_launch.size()];
    log.writes += writes;
    if (!log.recurring) log.new_writes += writes;
  }
}

void LoggingExecutor::issue(std::size_t op, const GpuCall&) {
  log.lines.push_back(name + " issue " + std::to_string(op));
  ++log.issued;
}

KernelCall call_of(std::uint64_t f) { return KernelCall{f, {1, 1, 1}, {32, 1, 1}, 0, std::vector<std::uint8_t>(8, 0)}; }

std::uint64_t sig(std::uint64_t f) { return 1000 + f; }

Action hand_over(RunSession& s, std::uint64_t signature, GpuCall call, std::size_t* requests) {
  std::size_t asked = 0;
  Action action = Action::Run;
  if (!s.concerns(signature)) {
    asked = s.passed_by();
  } else {
    action = s.on_call(signature, std::move(call));
    asked = s.take_request();
  }
  if (requests) *requests += asked;
  return action;
}

RecordingSetup recording(const std::string& name, const std::vector<std::uint64_t>& functions, Log& log,
                         std::size_t piece, std::uint64_t fingerprint) {
  RecordingSetup s;
  s.name = name;
  for (std::uint64_t f : functions) {
    Op op;
    op.kind = OpKind::Kernel;
    op.name = "k" + std::to_string(f);
    op.kernel.function = f;
    op.kernel.block[0] = 32;
    op.kernel.args.assign(8, 0);
    op.kernel.param_offsets = {0};
    op.kernel.param_sizes = {8};
    s.plan.ops.push_back(op);
    s.call_signatures.push_back(sig(f));
  }
  s.segments = segments_of(s.plan, piece);
  s.first_signature = sig(functions.front());
  s.fingerprint = fingerprint;
  s.skip_library = false;
  s.make_executor = [&log, name](const ReplayPlan&, const std::vector<Segment>&) {
    return std::make_unique<LoggingExecutor>(log, name);
  };
  return s;
}

}  // namespace nimble::replayer::test
