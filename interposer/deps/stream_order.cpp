#include "stream_order.hpp"

#include <algorithm>

namespace nimble::deps::detail {

namespace {
constexpr unsigned kNonBlocking = 0x1;  // CU_STREAM_NON_BLOCKING

std::size_t lookup(const std::unordered_map<std::uint64_t, std::size_t>& marks, std::uint64_t serial) {
  auto it = marks.find(serial);
  return it == marks.end() ? 0 : it->second;
}

void raise(std::unordered_map<std::uint64_t, std::size_t>& marks, std::uint64_t serial,
           std::size_t size) {
  auto& mark = marks[serial];
  mark = std::max(mark, size);
}

void sort_unique(std::vector<trace::TaskId>& tasks) {
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
}

}  // namespace

StreamOrder::StreamOrder() {
  legacy_ = &make(StreamKind::Legacy, kLegacyStream, 0, 0, 0, true);
}

StreamInfo& StreamOrder::make(StreamKind kind, StreamHandle handle, ThreadId thread,
                              unsigned flags, int priority, bool seen_created) {
  auto info = std::make_unique<StreamInfo>();
  info->id = next_id_++;
  info->kind = kind;
  info->handle = handle;
  info->thread = thread;
  info->flags = flags;
  info->priority = priority;
  info->seen_created = seen_created;
  // Per-thread default streams do synchronise with the legacy stream (CUDA "Stream
  // synchronization behavior"); only CU_STREAM_NON_BLOCKING opts out.
  info->blocking = kind != StreamKind::Created || (flags & kNonBlocking) == 0;
  StreamInfo& ref = *info;
  streams_.emplace(ref.id, std::move(info));
  return ref;
}

void StreamOrder::created(StreamHandle handle, unsigned flags, int priority, ThreadId thread) {
  if (handle == kLegacyStream || handle == kPerThreadStream) return;  // not real handles
  // A handle seen again without a destroy is a new stream whose destroy we missed.
  if (auto it = by_handle_.find(handle); it != by_handle_.end()) {
    it->second->destroyed = true;
  }
  by_handle_[handle] = &make(StreamKind::Created, handle, thread, flags, priority, true);
}

void StreamOrder::destroyed(StreamHandle handle, bool capturing) {
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return;
  StreamInfo* stream = it->second;
  by_handle_.erase(it);
  stream->destroyed = true;
  // Work on a destroyed stream still runs to completion and still counts for context syncs
  // and the legacy stream, so the object stays while the window may refer to it.
  if (!capturing) prune_destroyed(*stream);
}

void StreamOrder::prune_destroyed(StreamInfo& stream) {
  const bool pending = stream.pending != nullptr && !stream.pending->tasks.empty();
  if (stream.trace_index >= 0 || !stream.frontier.empty() || pending || stream.dirty_for_legacy) {
    return;
  }
  streams_.erase(stream.id);
}

StreamInfo& StreamOrder::resolve(StreamHandle handle, ThreadId thread) {
  if (handle == kLegacyStream) return *legacy_;
  if (handle == kPerThreadStream) {
    auto& slot = per_thread_[thread];
    if (slot == nullptr) slot = &make(StreamKind::PerThread, kPerThreadStream, thread, 0, 0, true);
    return *slot;
  }
  auto& slot = by_handle_[handle];
  // Never seen created (created before the preload, or through an API we do not hook):
  // assume the conservative kind, a blocking stream.
  if (slot == nullptr) slot = &make(StreamKind::Created, handle, 0, 0, 0, false);
  return *slot;
}

int StreamOrder::trace_index(StreamInfo& stream) {
  if (stream.trace_index < 0) {
    stream.trace_index = static_cast<int>(in_trace_.size());
    in_trace_.push_back(&stream);
  }
  return stream.trace_index;
}

std::size_t StreamOrder::host_covered_prefix(const PendingList& list) const {
  return lookup(host_absorbed_, list.serial);
}

void StreamOrder::obligations(const StreamInfo& stream, TaskSet& out) const {
  for (const Pending& p : stream.frontier) out.tasks.push_back(p.task);
  if (stream.pending != nullptr) {
    const std::size_t size = stream.pending->tasks.size();
    if (size > host_covered_prefix(*stream.pending)) out.lists.push_back({stream.pending, size});
  }
}

void StreamOrder::legacy_incoming(const StreamInfo& stream, TaskSet& out) const {
  if (&stream == legacy_) {
    // Blocking streams untouched since the last legacy task are already behind it.
    for (const StreamInfo* other : dirty_blocking_) obligations(*other, out);
  } else if (stream.blocking && stream.legacy_gen_seen != legacy_gen_) {
    obligations(*legacy_, out);
  }
}

void StreamOrder::absorb(StreamInfo& stream, const TaskSet& set, Why why) {
  for (trace::TaskId task : set.tasks) stream.frontier.push_back({task, why});
  for (const PendingRef& ref : set.lists) {
    const std::uint64_t serial = ref.list->serial;
    const std::size_t from = std::max(lookup(stream.absorbed, serial), host_covered_prefix(*ref.list));
    for (std::size_t i = from; i < ref.size; ++i) stream.frontier.push_back({ref.list->tasks[i], why});
    raise(stream.absorbed, serial, ref.size);
  }
  // One entry per (task, reason): waits on the same event, or several paths to one task.
  if (stream.frontier.size() > 1) {
    auto less = [](const Pending& a, const Pending& b) {
      return a.task != b.task ? a.task < b.task : a.why < b.why;
    };
    auto same = [](const Pending& a, const Pending& b) { return a.task == b.task && a.why == b.why; };
    std::sort(stream.frontier.begin(), stream.frontier.end(), less);
    stream.frontier.erase(std::unique(stream.frontier.begin(), stream.frontier.end(), same),
                          stream.frontier.end());
  }
}

void StreamOrder::task_deps(StreamInfo& stream, bool relaxable, DepCollector& deps) {
  // What the legacy stream's rules add becomes part of the frontier, so every later task of
  // the stream keeps it (under Keep the task replaces the frontier at once anyway).
  TaskSet cross;
  legacy_incoming(stream, cross);
  if (&stream == legacy_) {
    for (StreamInfo* other : dirty_blocking_) other->dirty_for_legacy = false;
    dirty_blocking_.clear();
  } else if (stream.blocking) {
    stream.legacy_gen_seen = legacy_gen_;
  }
  if (!cross.empty()) absorb(stream, cross, Why::DefaultStream);

  for (const Pending& p : stream.frontier) deps.add(p.task, p.why);
  if (!relaxable && stream.pending != nullptr) {
    // An ordering task waits for every relaxable task since the last one (not already behind
    // the latest host sync, which this task is ordered after).
    const auto& tasks = stream.pending->tasks;
    for (std::size_t i = host_covered_prefix(*stream.pending); i < tasks.size(); ++i) {
      deps.add(tasks[i], Why::Stream);
    }
  }
  if (last_sync_ != kNoTask && stream.sync_seen != last_sync_) deps.add(last_sync_, Why::HostSync);
}

void StreamOrder::mark_changed(StreamInfo& stream) {
  stream.host_covered = false;
  if (&stream == legacy_) {
    ++legacy_gen_;
  } else if (stream.blocking && !stream.dirty_for_legacy) {
    stream.dirty_for_legacy = true;
    dirty_blocking_.push_back(&stream);
  }
}

void StreamOrder::task_issued(StreamInfo& stream, trace::TaskId task, bool relaxable) {
  if (!relaxable) {
    // Everything earlier on the stream is behind this task now.
    stream.frontier.assign(1, Pending{task, Why::Stream});
    stream.pending.reset();
    ++stream.epoch;
    stream.sync_seen = last_sync_;
  } else {
    if (stream.pending == nullptr) {
      stream.pending = std::make_shared<PendingList>();
      stream.pending->serial = next_list_serial_++;
    }
    stream.pending->tasks.push_back(task);
    if (stream.frontier.size() > kFrontierLimit) {
      // This task depends on the whole frontier; later tasks depend on it instead. It is not a
      // boundary: the pending tasks before it are not ordered before it.
      stream.frontier.assign(1, Pending{task, Why::Stream});
      stream.sync_seen = last_sync_;
    }
  }
  mark_changed(stream);
}

void StreamOrder::absorb_blocking_into_legacy() {
  TaskSet set;
  for (StreamInfo* other : dirty_blocking_) {
    obligations(*other, set);
    other->dirty_for_legacy = false;
  }
  if (!dirty_blocking_.empty()) {
    absorb(*legacy_, set, Why::DefaultStream);
    mark_changed(*legacy_);
  }
  dirty_blocking_.clear();
}

void StreamOrder::event_recorded(EventHandle event, StreamInfo& stream) {
  // A record on the legacy stream is itself legacy-stream work that waited for the blocking
  // streams; later blocking-stream work waits for it, hence for them.
  if (&stream == legacy_) absorb_blocking_into_legacy();
  TaskSet captured;
  obligations(stream, captured);
  legacy_incoming(stream, captured);
  sort_unique(captured.tasks);
  events_[event] = std::move(captured);  // a re-record replaces what the event stood for
}

void StreamOrder::stream_waited(StreamInfo& stream, EventHandle event) {
  auto it = events_.find(event);
  if (&stream == legacy_) absorb_blocking_into_legacy();  // a wait is legacy-stream work too
  if (it == events_.end() || it->second.empty()) return;  // never recorded in the window
  absorb(stream, it->second, Why::Event);
  mark_changed(stream);
}

void StreamOrder::add_for_sync(const TaskSet& set, DepCollector& deps) {
  for (trace::TaskId task : set.tasks) deps.add(task, Why::HostSync);
  for (const PendingRef& ref : set.lists) {
    for (std::size_t i = host_covered_prefix(*ref.list); i < ref.size; ++i) {
      deps.add(ref.list->tasks[i], Why::HostSync);
    }
    raise(host_absorbed_, ref.list->serial, ref.size);
  }
}

void StreamOrder::cover(StreamInfo& stream, DepCollector& deps) {
  if (stream.host_covered) return;
  TaskSet set;
  obligations(stream, set);
  add_for_sync(set, deps);
  stream.host_covered = true;
  // All of the stream's work so far is behind the sync, all later work after it.
  stream.pending.reset();
  ++stream.epoch;
}

void StreamOrder::stream_synced(StreamInfo& stream, trace::TaskId task, DepCollector& deps) {
  // Conservatively the host also waits for what the stream's next operation would wait for
  // through the legacy stream. Obligations an earlier sync covered are behind last_sync_.
  cover(stream, deps);
  if (&stream == legacy_) {
    for (StreamInfo* other : dirty_blocking_) cover(*other, deps);
  } else if (stream.blocking && stream.legacy_gen_seen != legacy_gen_) {
    cover(*legacy_, deps);
  }
  if (last_sync_ != kNoTask) deps.add(last_sync_, Why::HostSync);
  last_sync_ = task;
}

void StreamOrder::event_synced(EventHandle event, trace::TaskId task, DepCollector& deps) {
  if (auto it = events_.find(event); it != events_.end()) add_for_sync(it->second, deps);
  if (last_sync_ != kNoTask) deps.add(last_sync_, Why::HostSync);
  last_sync_ = task;
}

void StreamOrder::context_synced(trace::TaskId task, DepCollector& deps) {
  // Streams whose obligations an earlier sync already covered are behind the previous sync.
  for (auto& [id, stream] : streams_) cover(*stream, deps);
  if (last_sync_ != kNoTask) deps.add(last_sync_, Why::HostSync);
  last_sync_ = task;
}

void StreamOrder::reset_window() {
  in_trace_.clear();
  dirty_blocking_.clear();
  events_.clear();
  host_absorbed_.clear();
  last_sync_ = kNoTask;
  legacy_gen_ = 0;
  for (auto it = streams_.begin(); it != streams_.end();) {
    StreamInfo& s = *it->second;
    if (s.destroyed) {
      it = streams_.erase(it);
      continue;
    }
    s.frontier.clear();
    s.pending.reset();
    s.absorbed.clear();
    s.trace_index = -1;
    s.legacy_gen_seen = 0;
    s.dirty_for_legacy = false;
    s.sync_seen = kNoTask;
    s.host_covered = true;
    ++it;
  }
}

}  // namespace nimble::deps::detail
