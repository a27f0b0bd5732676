// Who touched which bytes: an interval map from address ranges to the last writer and the
// readers since that write, plus the same for "everything" accesses. Finds RAW, WAR and WAW
// conflicts for a new task in O(k log n) for k accesses, plus the conflicts found.
//
// State is keyed by address and survives frees, so memory handed out again (a caching
// allocator, or a new allocation at a reused address) conflicts with its earlier users.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "dep_set.hpp"
#include "engine.hpp"
#include "stream_order.hpp"

namespace nimble::deps::detail {

// One byte range a task touches, with the allocation it lies in (for the reason text).
struct RangeAccess {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;  // exclusive
  Access mode = Access::ReadWrite;
  std::int64_t alloc = -1;  // -1: not inside a tracked allocation
  std::uint64_t alloc_base = 0;
};

class MemoryState {
 public:
  // Adds to `deps` every earlier task whose accesses conflict with this task's, then records
  // this task's accesses. `everything` is the mode of the task's access to all memory, if any.
  // `epoch` is the task's stream epoch (StreamInfo::epoch after task_issued): tasks of one
  // stream with different epochs are ordered by the stream's own bookkeeping.
  void record(trace::TaskId task, StreamId stream, std::uint64_t epoch,
              const std::vector<RangeAccess>& ranges, std::optional<Access> everything,
              DepCollector& deps);
  void reset();
  std::size_t segment_count() const { return segments_.size(); }

 private:
  // Tasks that touched some memory, grouped by stream. A group holds the tasks of its stream's
  // latest epoch only: a task of an earlier epoch is ordered before every task of a later one
  // (under Keep every task starts an epoch, so this is "the latest reader per stream"; under
  // Memory all readers between two ordering points of a stream are kept).
  struct Group {
    StreamId stream;
    std::uint64_t epoch;
    std::vector<trace::TaskId> tasks;
  };
  using Groups = std::vector<Group>;
  struct Segment {
    std::uint64_t hi = 0;
    trace::TaskId writer = kNoTask;
    Groups readers;
  };
  using Map = std::map<std::uint64_t, Segment>;  // keyed by lo; segments never overlap

  struct Who {
    trace::TaskId task;
    StreamId stream;
    std::uint64_t epoch;
  };

  void record_range(const Who& who, const RangeAccess& r, DepCollector& deps);
  // Adds the conflicts of one access; returns the segment that is exactly [lo, hi), if there
  // is one, else end().
  Map::iterator add_conflicts(trace::TaskId task, const RangeAccess& r, DepCollector& deps);
  void write_range(trace::TaskId task, const RangeAccess& r, Map::iterator exact);
  void read_range(const Who& who, const RangeAccess& r);
  void record_everything(const Who& who, Access mode, DepCollector& deps);
  Map::iterator split(std::uint64_t at);
  static void add_to(Groups& groups, const Who& who);
  static Groups single(const Who& who) { return Groups{Group{who.stream, who.epoch, {who.task}}}; }

  Map segments_;
  // Latest task that wrote all memory. Every later access conflicts with it and it depends on
  // everything before it, so the interval map is emptied when it is set.
  trace::TaskId everything_writer_ = kNoTask;
  Groups everything_readers_;  // read all memory since everything_writer_
  // The tasks that wrote / read some range since everything_writer_, per stream and epoch:
  // what a later access to everything conflicts with, without walking the interval map.
  Groups writers_since_;
  Groups readers_since_;
};

}  // namespace nimble::deps::detail
