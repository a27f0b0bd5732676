#include "nimble/replayer/renaming.hpp"

#include "deps/dep_set.hpp"
#include "deps/memory_state.hpp"
#include "nimble/trace/recorded.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nimble::replayer {
namespace {

using trace::json;
namespace dd = deps::detail;

// The conflicts are the dependency engine's (MemoryState), found in a renamed address space:
// every allocation gets its own region, so two allocations that shared an address in the
// program never overlap. Untracked addresses keep their own value (below 2^48 on x86-64 and
// aarch64); allocation a starts at (a + 2^8) << 40, above every real address, with room for
// 2^40 bytes each. An access that does not fit that space counts as touching everything.
constexpr unsigned kRegionBits = 40;
constexpr std::uint64_t kFirstRegion = 1ull << 8;
// The last region would end at 2^64 (wrapping to 0): one fewer.
constexpr std::uint64_t kRegions = (1ull << (64 - kRegionBits)) - kFirstRegion - 1;

std::optional<dd::RangeAccess> renamed_range(const trace::MemoryAccess& a) {
  dd::RangeAccess r;
  r.mode = a.mode;
  std::uint64_t base = 0;
  if (a.target == trace::MemoryAccess::Target::Allocation) {
    if (a.alloc < 0 || static_cast<std::uint64_t>(a.alloc) >= kRegions) return std::nullopt;
    if (a.offset > (1ull << kRegionBits) || a.size > (1ull << kRegionBits) - a.offset) return std::nullopt;
    base = (static_cast<std::uint64_t>(a.alloc) + kFirstRegion) << kRegionBits;
    r.alloc = a.alloc;
  } else if (a.offset >= (kFirstRegion << kRegionBits) || a.size > (kFirstRegion << kRegionBits) - a.offset) {
    return std::nullopt;
  }
  r.alloc_base = base;
  r.lo = base + a.offset;
  r.hi = r.lo + a.size;
  return r;
}

// "memory RAW alloc 3 (renamed)"; untracked addresses read "alloc -1".
std::string renamed_reason(const dd::Reason& r) {
  std::string out = dd::why_label(r.why);
  out += r.everything ? " everything" : " alloc " + std::to_string(r.alloc);
  return out + " (renamed)";
}

// Reasons other than memory conflicts survive renaming (a dependency without a recorded reason
// is kept too: when in doubt, keep the order).
std::optional<std::string> kept_reason(const trace::Task& task, trace::TaskId dep) {
  const auto reasons = trace::read_reasons(task, dep);
  if (!reasons) return "kept";
  for (const trace::DepReason& r : *reasons) {
    if (!r.memory()) return trace::join_reasons(*reasons);
  }
  return std::nullopt;
}

}  // namespace

RenameStats rename_memory(trace::Trace& trace) {
  RenameStats stats;
  dd::MemoryState memory;
  for (trace::Task& task : trace.tasks) {
    stats.edges_before += task.deps.size();
    std::map<trace::TaskId, std::string> reasons;
    for (trace::TaskId d : task.deps) {
      if (auto why = kept_reason(task, d)) reasons[d] = *why;
    }
    std::vector<dd::RangeAccess> ranges;
    std::optional<deps::Access> everything;
    auto touch_everything = [&](deps::Access mode) {
      everything = everything && *everything != mode ? deps::Access::ReadWrite : mode;
    };
    for (const trace::MemoryAccess& a : trace::read_mem(task)) {
      const auto range = a.target == trace::MemoryAccess::Target::Everything ? std::nullopt : renamed_range(a);
      if (range) ranges.push_back(*range);
      else touch_everything(a.mode);
    }
    if (everything) {
      // Memory nimble cannot see: keep every recorded dependency as well.
      for (trace::TaskId d : task.deps) reasons.emplace(d, "kept");
    }
    // One stream, one epoch: nothing orders two tasks but their conflicts.
    dd::DepCollector found;
    memory.record(task.id, /*stream=*/0, /*epoch=*/0, ranges, everything, found);
    for (const dd::Dep& dep : found.finish()) {
      auto& why = reasons[dep.task];
      for (const dd::Reason& r : dep.reasons) {
        const std::string text = renamed_reason(r);
        if (why.find(text) == std::string::npos) why += (why.empty() ? "" : "; ") + text;
      }
    }
    task.deps.clear();
    json new_reasons = json::object();
    for (const auto& [d, why] : reasons) {
      task.deps.push_back(d);
      new_reasons[std::to_string(d)] = why;
    }
    task.extra["dep_reasons"] = std::move(new_reasons);
    stats.edges_after += task.deps.size();
  }
  return stats;
}

}  // namespace nimble::replayer
