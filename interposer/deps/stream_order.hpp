// Ordering that comes from the program's streams rather than its memory: stream order, events,
// the legacy default stream's implicit synchronisation and host synchronisation points.
//
// Each stream keeps a "frontier": tasks every later operation on the stream must be ordered
// after (the stream's last ordering task plus what event waits and the legacy stream added).
// Under the Keep policy every task is an ordering task: it depends on the frontier and becomes
// it, so a task transitively covers everything earlier on its stream and frontiers stay tiny.
//
// Under the Memory policy a *relaxable* task (all accesses known) depends on the frontier but
// does not replace it: it joins the stream's "pending" list instead, and is ordered against the
// other pending tasks by memory conflicts only. A non-relaxable task depends on the frontier
// and the whole pending list and then becomes the frontier. Everything that stands for "all work
// of the stream so far" (event records, the legacy stream's rules, host syncs) uses the
// stream's obligations: frontier plus pending list.
//
// Cost control (docs/dependencies.md, "Cost"): pending lists are shared and captured by
// reference (an event record is O(frontier)); a stream remembers how much of each pending list
// it has already absorbed into its frontier, and the host remembers how much the latest sync
// covers, so no prefix is expanded twice for the same consumer; a frontier that grows past
// kFrontierLimit entries is handed on by the next relaxable task (it becomes the frontier).
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "dep_set.hpp"
#include "engine.hpp"

namespace nimble::deps::detail {

using StreamId = std::uint64_t;  // serial number of a stream object; never reused

enum class StreamKind { Legacy, PerThread, Created };

// A frontier larger than this is collapsed into the next relaxable task of the stream, which
// then stands for it (one extra ordering instead of re-adding the frontier to every task).
inline constexpr std::size_t kFrontierLimit = 16;

struct Pending {
  trace::TaskId task;
  Why why;
};

// Relaxable tasks of one stream since its last ordering task (Memory policy). Append-only; a
// new list starts at the next boundary, so a prefix of a list is a stable set of tasks.
struct PendingList {
  std::uint64_t serial = 0;  // never reused within an engine
  std::vector<trace::TaskId> tasks;
};

// The first `size` tasks of a pending list.
struct PendingRef {
  std::shared_ptr<const PendingList> list;
  std::size_t size = 0;
};

// A set of tasks as captured by an event record: explicit tasks plus pending-list prefixes.
struct TaskSet {
  std::vector<trace::TaskId> tasks;
  std::vector<PendingRef> lists;
  bool empty() const { return tasks.empty() && lists.empty(); }
};

struct StreamInfo {
  StreamId id = 0;
  StreamKind kind = StreamKind::Created;
  StreamHandle handle = 0;
  ThreadId thread = 0;     // per-thread default streams: the owning thread
  unsigned flags = 0;
  int priority = 0;
  bool seen_created = true;  // false: used without a stream_created (treated as blocking)
  bool blocking = true;      // synchronises with the legacy default stream
  bool destroyed = false;

  // State of the current capture window.
  std::vector<Pending> frontier;
  std::shared_ptr<PendingList> pending;  // Memory policy: relaxable tasks since the boundary
  // Pending-list serial -> length of the prefix this stream's frontier already covers.
  std::unordered_map<std::uint64_t, std::size_t> absorbed;
  // Bumped whenever all earlier tasks of the stream are ordered before all later ones (an
  // ordering task, a host sync covering the stream). Two tasks of the stream with different
  // epochs are ordered; the memory state uses it to drop readers that are provably earlier.
  std::uint64_t epoch = 0;
  int trace_index = -1;                // index in the trace's "streams" list, once used
  std::uint64_t legacy_gen_seen = 0;   // legacy-stream state this stream already waits for
  bool dirty_for_legacy = false;       // changed since the legacy stream last waited for it
  trace::TaskId sync_seen = kNoTask;   // latest host sync the frontier depends on
  bool host_covered = true;            // obligations are ancestors of the latest host sync
};

class StreamOrder {
 public:
  StreamOrder();

  void set_policy(StreamOrderPolicy policy) { policy_ = policy; }
  StreamOrderPolicy policy() const { return policy_; }

  void created(StreamHandle handle, unsigned flags, int priority, ThreadId thread);
  void destroyed(StreamHandle handle, bool capturing);
  // The stream object a handle names for `thread` (created on first use for per-thread and
  // unknown handles).
  StreamInfo& resolve(StreamHandle handle, ThreadId thread);
  // Index in the trace's "streams" list, assigned in order of first use.
  int trace_index(StreamInfo& stream);
  const std::vector<StreamInfo*>& trace_streams() const { return in_trace_; }

  // A task on `stream`: its ordering deps, then the bookkeeping once it has id `task`.
  // `relaxable` is only true under the Memory policy. After task_issued, stream.epoch is the
  // task's epoch.
  void task_deps(StreamInfo& stream, bool relaxable, DepCollector& deps);
  void task_issued(StreamInfo& stream, trace::TaskId task, bool relaxable);

  void event_recorded(EventHandle event, StreamInfo& stream);
  void stream_waited(StreamInfo& stream, EventHandle event);

  // Host syncs: fill the sync task's deps (the work the host waited for and the previous
  // sync) and make `task` the sync that later work is ordered after.
  void stream_synced(StreamInfo& stream, trace::TaskId task, DepCollector& deps);
  void event_synced(EventHandle event, trace::TaskId task, DepCollector& deps);
  void context_synced(trace::TaskId task, DepCollector& deps);

  // Forget all window state (tasks of an earlier window are complete).
  void reset_window();

 private:
  // Everything the stream's work so far stands for: frontier plus pending list.
  void obligations(const StreamInfo& stream, TaskSet& out) const;
  // What an operation on `stream` waits for through the legacy stream's rules.
  void legacy_incoming(const StreamInfo& stream, TaskSet& out) const;
  // Adds `set` to the stream's frontier (skipping list prefixes it or the host already covers).
  void absorb(StreamInfo& stream, const TaskSet& set, Why why);
  // Adds `set` to a host sync's deps, skipping what earlier syncs cover, and records that the
  // sync covers it.
  void add_for_sync(const TaskSet& set, DepCollector& deps);
  // A host sync covers the stream's obligations (unless an earlier one did).
  void cover(StreamInfo& stream, DepCollector& deps);
  std::size_t host_covered_prefix(const PendingList& list) const;
  void mark_changed(StreamInfo& stream);
  void absorb_blocking_into_legacy();
  void prune_destroyed(StreamInfo& stream);
  StreamInfo& make(StreamKind kind, StreamHandle handle, ThreadId thread, unsigned flags,
                   int priority, bool seen_created);

  StreamOrderPolicy policy_ = StreamOrderPolicy::Keep;
  std::unordered_map<StreamId, std::unique_ptr<StreamInfo>> streams_;
  std::unordered_map<StreamHandle, StreamInfo*> by_handle_;  // created and unknown streams
  std::unordered_map<ThreadId, StreamInfo*> per_thread_;
  StreamInfo* legacy_ = nullptr;
  StreamId next_id_ = 0;
  std::uint64_t next_list_serial_ = 0;

  std::uint64_t legacy_gen_ = 0;               // bumped whenever the legacy obligations change
  std::vector<StreamInfo*> dirty_blocking_;    // blocking streams changed since the last legacy task
  std::unordered_map<EventHandle, TaskSet> events_;  // captured work
  trace::TaskId last_sync_ = kNoTask;
  // Pending-list serial -> length of the prefix that is behind last_sync_. Every task issued
  // after a sync is ordered after it, so no later consumer needs those tasks again.
  std::unordered_map<std::uint64_t, std::size_t> host_absorbed_;
  std::vector<StreamInfo*> in_trace_;
};

}  // namespace nimble::deps::detail
