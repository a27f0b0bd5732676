#include "memory_state.hpp"

#include <algorithm>

namespace nimble::deps::detail {

namespace {

bool reads(Access mode) { return mode != Access::Write; }
bool writes(Access mode) { return mode != Access::Read; }

Reason range_reason(Why why, const RangeAccess& r, std::uint64_t lo, std::uint64_t hi) {
  Reason reason{why};
  reason.alloc = r.alloc;
  const std::uint64_t base = r.alloc >= 0 ? r.alloc_base : 0;
  reason.lo = lo - base;
  reason.hi = hi - base;
  return reason;
}

Reason everything_reason(Why why) {
  Reason reason{why};
  reason.everything = true;
  return reason;
}

}  // namespace

void MemoryState::record(trace::TaskId task, StreamId stream, std::uint64_t epoch,
                         const std::vector<RangeAccess>& ranges, std::optional<Access> everything,
                         DepCollector& deps) {
  const Who who{task, stream, epoch};
  if (everything) record_everything(who, *everything, deps);
  // A write to everything subsumes the task's own ranges.
  if (everything && writes(*everything)) return;
  for (const RangeAccess& r : ranges) {
    if (r.hi > r.lo) record_range(who, r, deps);
  }
}

void MemoryState::add_to(Groups& groups, const Who& who) {
  for (Group& g : groups) {
    if (g.stream != who.stream) continue;
    if (g.epoch != who.epoch) {
      // Epochs only grow: the group's tasks are all ordered before this one.
      g.epoch = who.epoch;
      g.tasks.assign(1, who.task);
    } else if (g.tasks.back() != who.task) {  // a task's own accesses arrive together
      g.tasks.push_back(who.task);
    }
    return;
  }
  groups.push_back(Group{who.stream, who.epoch, {who.task}});
}

MemoryState::Map::iterator MemoryState::split(std::uint64_t at) {
  auto it = segments_.lower_bound(at);
  if (it != segments_.end() && it->first == at) return it;
  if (it == segments_.begin()) return it;
  auto prev = std::prev(it);
  if (prev->second.hi <= at) return it;  // `at` lies in a gap
  Segment tail = prev->second;
  prev->second.hi = at;
  return segments_.emplace_hint(it, at, std::move(tail));
}

void MemoryState::record_range(const Who& who, const RangeAccess& r, DepCollector& deps) {
  const auto exact = add_conflicts(who.task, r, deps);
  if (writes(r.mode)) {
    write_range(who.task, r, exact);
    add_to(writers_since_, who);
  } else {
    read_range(who, r);
  }
  if (reads(r.mode)) add_to(readers_since_, who);
}

MemoryState::Map::iterator MemoryState::add_conflicts(trace::TaskId task, const RangeAccess& r,
                                                      DepCollector& deps) {
  const bool wr = writes(r.mode);
  const Why on_writer = reads(r.mode) ? Why::MemRAW : Why::MemWAW;
  auto it = segments_.upper_bound(r.lo);
  if (it != segments_.begin() && std::prev(it)->second.hi > r.lo) --it;
  const auto first = it;
  for (; it != segments_.end() && it->first < r.hi; ++it) {
    const Segment& seg = it->second;
    const std::uint64_t lo = std::max(r.lo, it->first);
    const std::uint64_t hi = std::min(r.hi, seg.hi);
    if (seg.writer != kNoTask && seg.writer != task) {
      deps.add(seg.writer, range_reason(on_writer, r, lo, hi));
    }
    if (!wr) continue;
    for (const Group& g : seg.readers) {
      for (trace::TaskId reader : g.tasks) {
        if (reader != task) deps.add(reader, range_reason(Why::MemWAR, r, lo, hi));
      }
    }
  }
  if (everything_writer_ != kNoTask) deps.add(everything_writer_, everything_reason(on_writer));
  if (wr) {
    for (const Group& g : everything_readers_) {
      for (trace::TaskId reader : g.tasks) {
        if (reader != task) deps.add(reader, everything_reason(Why::MemWAR));
      }
    }
  }
  // Segments never overlap, so one that is exactly [lo, hi) is the only one in the range.
  const bool exact = first != segments_.end() && first->first == r.lo && first->second.hi == r.hi;
  return exact ? first : segments_.end();
}

void MemoryState::write_range(trace::TaskId task, const RangeAccess& r, Map::iterator exact) {
  // The common case, the same range written again (a whole allocation), is updated in place.
  if (exact != segments_.end()) {
    exact->second.writer = task;
    exact->second.readers.clear();
    return;
  }
  // Otherwise one segment owned by this writer replaces everything in the range.
  auto first = split(r.lo);
  auto last = split(r.hi);
  segments_.erase(first, last);
  segments_.emplace_hint(last, r.lo, Segment{r.hi, task, {}});
}

void MemoryState::read_range(const Who& who, const RangeAccess& r) {
  auto first = split(r.lo);
  auto last = split(r.hi);
  std::uint64_t cursor = r.lo;  // gaps between existing segments get new ones
  for (auto seg = first; seg != last; ++seg) {
    if (seg->first > cursor) segments_.emplace_hint(seg, cursor, Segment{seg->first, kNoTask, single(who)});
    add_to(seg->second.readers, who);
    cursor = seg->second.hi;
  }
  if (cursor < r.hi) segments_.emplace_hint(last, cursor, Segment{r.hi, kNoTask, single(who)});
}

void MemoryState::record_everything(const Who& who, Access mode, DepCollector& deps) {
  const Why on_writer = reads(mode) ? Why::MemRAW : Why::MemWAW;
  if (everything_writer_ != kNoTask) deps.add(everything_writer_, everything_reason(on_writer));
  for (const Group& g : writers_since_) {
    for (trace::TaskId writer : g.tasks) deps.add(writer, everything_reason(on_writer));
  }
  if (!writes(mode)) {
    add_to(everything_readers_, who);
    return;
  }
  for (const Group& g : everything_readers_) {
    for (trace::TaskId reader : g.tasks) deps.add(reader, everything_reason(Why::MemWAR));
  }
  for (const Group& g : readers_since_) {
    for (trace::TaskId reader : g.tasks) deps.add(reader, everything_reason(Why::MemWAR));
  }
  // Everything recorded so far is behind this task now; later accesses only need it.
  everything_writer_ = who.task;
  everything_readers_.clear();
  writers_since_.clear();
  readers_since_.clear();
  segments_.clear();
}

void MemoryState::reset() {
  segments_.clear();
  everything_writer_ = kNoTask;
  everything_readers_.clear();
  writers_since_.clear();
  readers_since_.clear();
}

}  // namespace nimble::deps::detail
