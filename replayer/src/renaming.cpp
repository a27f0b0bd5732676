#include "nimble/replayer/renaming.hpp"

#include "nimble/trace/recorded.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace nimble::replayer {
namespace {

using trace::json;

struct Access {
  trace::TaskId task;
  std::uint64_t begin, end;
  bool writes;
};

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
  // Per allocation id (untracked addresses share key -1, in absolute addresses): earlier accesses.
  std::map<std::int64_t, std::vector<Access>> history;
  for (trace::Task& task : trace.tasks) {
    stats.edges_before += task.deps.size();
    std::map<trace::TaskId, std::string> reasons;
    for (trace::TaskId d : task.deps) {
      if (auto why = kept_reason(task, d)) reasons[d] = *why;
    }
    std::vector<std::pair<std::int64_t, Access>> mine;
    bool everything = false;
    for (const trace::MemoryAccess& a : trace::read_mem(task)) {
      const Access access{task.id, a.offset, a.offset + a.size, a.writes()};
      if (a.target == trace::MemoryAccess::Target::Everything) everything = true;
      else mine.push_back({a.target == trace::MemoryAccess::Target::Allocation ? a.alloc : -1, access});
    }
    if (everything) {
      // Memory nimble cannot see: keep every recorded dependency.
      for (trace::TaskId d : task.deps) reasons.emplace(d, "kept");
    }
    for (const auto& [alloc, access] : mine) {
      for (const Access& earlier : history[alloc]) {
        if (earlier.task == task.id || (!earlier.writes && !access.writes)) continue;
        if (earlier.begin >= access.end || access.begin >= earlier.end) continue;
        const char* kind = earlier.writes ? (access.writes ? "WAW" : "RAW") : "WAR";
        auto& why = reasons[earlier.task];
        const std::string text = std::string("memory ") + kind + " alloc " + std::to_string(alloc) + " (renamed)";
        if (why.find(text) == std::string::npos) why += (why.empty() ? "" : "; ") + text;
      }
    }
    for (const auto& [alloc, access] : mine) history[alloc].push_back(access);
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
