#include "nimble/replayer/end_reads.hpp"

#include <algorithm>

#include "nimble/trace/recorded.hpp"

namespace nimble::replayer {
namespace {

bool is_call(trace::TaskKind kind) {
  return kind == trace::TaskKind::Kernel || kind == trace::TaskKind::Memcpy || kind == trace::TaskKind::Memset;
}

bool only_orders(trace::TaskKind kind) { return kind == trace::TaskKind::Sync || kind == trace::TaskKind::HostFunc; }

bool is_read(const Op& op) { return op.kind == OpKind::Copy && op.copy.direction == CopyDirection::DtoH; }

// From `first` in steps of `step`, the host reads before the first op that is neither a read nor
// one that only orders: their op indices.
template <class Index>
std::vector<std::size_t> reads_from(const trace::Trace& trace, const ReplayPlan& plan, Index first, Index step) {
  std::vector<std::size_t> reads;
  const auto n = static_cast<Index>(plan.ops.size());
  for (Index i = first; i >= 0 && i < n; i += step) {
    const auto op = static_cast<std::size_t>(i);
    if (is_read(plan.ops[op])) {
      reads.push_back(op);
    } else if (!(plan.ops[op].kind == OpKind::Nop && only_orders(trace::kind_of(trace.tasks[op])))) {
      return reads;
    }
  }
  return {};  // nothing but reads: no iteration left to replay
}

}  // namespace

EndReads leave_end_reads_to_program(const trace::Trace& trace, ReplayPlan& plan, std::size_t calls) {
  if (trace.tasks.size() != plan.ops.size()) return {};
  std::size_t calls_in_trace = 0;
  for (const trace::Task& t : trace.tasks) {
    const trace::TaskKind kind = trace::kind_of(t);
    if (!is_call(kind) && !only_orders(kind)) return {};  // program graphs, stream ops: calls do not map
    calls_in_trace += is_call(kind);
  }
  if (calls_in_trace != calls) return {};
  using Index = std::ptrdiff_t;
  const std::vector<std::size_t> leading = reads_from<Index>(trace, plan, 0, 1);
  const std::vector<std::size_t> trailing = reads_from<Index>(trace, plan, static_cast<Index>(plan.ops.size()) - 1, -1);
  for (const auto* end : {&leading, &trailing}) {
    for (std::size_t op : *end) {
      plan.ops[op].kind = OpKind::Nop;
      plan.ops[op].end_read = true;
    }
  }
  return {leading.size(), trailing.size()};
}

std::vector<std::uint64_t> calls_between_reads(const std::vector<std::uint64_t>& calls, const EndReads& reads) {
  std::vector<std::uint64_t> out = calls;
  if (reads.total() == 0 || reads.total() >= calls.size()) return out;
  std::rotate(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(reads.leading), out.end());
  return out;
}

}  // namespace nimble::replayer
