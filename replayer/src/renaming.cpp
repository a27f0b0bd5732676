#include "nimble/replayer/renaming.hpp"

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
bool has_other_reason(const trace::Task& task, trace::TaskId dep) {
  auto reasons = task.extra.find("dep_reasons");
  if (reasons == task.extra.end() || !reasons->is_object()) return true;
  auto it = reasons->find(std::to_string(dep));
  if (it == reasons->end() || !it->is_string()) return true;
  const std::string text = it->get<std::string>();
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find(';', start), text.size());
    std::string part = text.substr(start, end - start);
    part.erase(0, part.find_first_not_of(' '));
    if (part.rfind("memory", 0) != 0) return true;
    start = end + 1;
  }
  return false;
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
      if (has_other_reason(task, d)) {
        auto old = task.extra.find("dep_reasons");
        const json* why = old != task.extra.end() && old->is_object() && old->contains(std::to_string(d))
                              ? &(*old)[std::to_string(d)] : nullptr;
        reasons[d] = why && why->is_string() ? why->get<std::string>() : "kept";
      }
    }
    std::vector<std::pair<std::int64_t, Access>> mine;
    auto mem = task.extra.find("mem");
    bool everything = false;
    if (mem != task.extra.end() && mem->is_array()) {
      for (const json& a : *mem) {
        const std::string mode = a.value("mode", std::string("rw"));
        const bool writes = mode.find('w') != std::string::npos;
        if (a.value("everything", false)) {
          everything = true;
        } else if (a.contains("alloc")) {
          const std::uint64_t offset = a.value("offset", std::uint64_t{0});
          mine.push_back({a["alloc"].get<std::int64_t>(), {task.id, offset, offset + a.value("size", std::uint64_t{0}), writes}});
        } else if (a.contains("addr") && a["addr"].is_string()) {
          const std::uint64_t addr = std::stoull(a["addr"].get<std::string>(), nullptr, 16);
          mine.push_back({-1, {task.id, addr, addr + a.value("size", std::uint64_t{0}), writes}});
        }
      }
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
