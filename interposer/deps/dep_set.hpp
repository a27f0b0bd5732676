// The dependencies of one task, each with the reasons it exists. Sources add edges in any order
// and possibly several times; finish() yields one edge per predecessor, sorted, reasons combined.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::deps::detail {

enum class Why : std::uint8_t {
  Stream,         // previous work on the same stream
  Event,          // cuStreamWaitEvent on an event recorded elsewhere
  DefaultStream,  // the legacy default stream's implicit synchronisation
  HostSync,       // a host synchronisation point (and the work it waited for)
  MemRAW,
  MemWAR,
  MemWAW,
  Graph,          // an edge of the program's own CUDA graph
};

inline bool is_memory(Why why) {
  return why == Why::MemRAW || why == Why::MemWAR || why == Why::MemWAW;
}

// Why one edge exists. Memory reasons carry the conflicting byte range of the later task's
// access: relative to allocation `alloc`'s base, or absolute when alloc < 0; or `everything`.
struct Reason {
  Why why = Why::Stream;
  bool everything = false;
  std::int64_t alloc = -1;
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
};

struct Dep {
  trace::TaskId task = 0;
  std::vector<Reason> reasons;
};

class DepCollector {
 public:
  void add(trace::TaskId task, const Reason& reason) { items_.emplace_back(task, reason); }
  void add(trace::TaskId task, Why why) { add(task, Reason{why}); }

  // Sorted by task id, one entry per task. Memory reasons of the same kind on the same
  // allocation are merged into the range that spans them, so a task touching many pieces of a
  // buffer yields one readable reason.
  std::vector<Dep> finish();

 private:
  std::vector<std::pair<trace::TaskId, Reason>> items_;
};

// "memory RAW", "stream", ...: the first words of a reason.
const char* why_label(Why why);

// "stream; memory RAW alloc 3 +0x100..+0x200"
std::string format_reasons(const std::vector<Reason>& reasons);

}  // namespace nimble::deps::detail
