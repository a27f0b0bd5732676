#include "dep_set.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace nimble::deps::detail {

std::vector<Dep> DepCollector::finish() {
  std::stable_sort(items_.begin(), items_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Dep> out;
  for (const auto& [task, reason] : items_) {
    if (out.empty() || out.back().task != task) out.push_back(Dep{task, {}});
    auto& reasons = out.back().reasons;
    auto same = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& r) {
      return r.why == reason.why && r.everything == reason.everything && r.alloc == reason.alloc;
    });
    if (same == reasons.end()) {
      reasons.push_back(reason);
    } else if (is_memory(reason.why) && !reason.everything) {
      same->lo = std::min(same->lo, reason.lo);
      same->hi = std::max(same->hi, reason.hi);
    }
  }
  items_.clear();
  return out;
}

const char* why_label(Why why) {
  switch (why) {
    case Why::Stream: return "stream";
    case Why::Event: return "event";
    case Why::DefaultStream: return "default-stream";
    case Why::HostSync: return "host-sync";
    case Why::MemRAW: return "memory RAW";
    case Why::MemWAR: return "memory WAR";
    case Why::MemWAW: return "memory WAW";
    case Why::Graph: return "graph";
  }
  return "unknown";
}

namespace {

std::string format_one(const Reason& r) {
  std::string out = why_label(r.why);
  if (!is_memory(r.why)) return out;
  char buf[96];
  if (r.everything) {
    out += " everything";
  } else if (r.alloc >= 0) {
    std::snprintf(buf, sizeof buf, " alloc %" PRId64 " +0x%" PRIx64 "..+0x%" PRIx64, r.alloc, r.lo,
                  r.hi);
    out += buf;
  } else {
    std::snprintf(buf, sizeof buf, " 0x%" PRIx64 "..0x%" PRIx64, r.lo, r.hi);
    out += buf;
  }
  return out;
}

}  // namespace

std::string format_reasons(const std::vector<Reason>& reasons) {
  std::string out;
  for (const auto& r : reasons) {
    if (!out.empty()) out += "; ";
    out += format_one(r);
  }
  return out;
}

}  // namespace nimble::deps::detail
