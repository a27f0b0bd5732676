// Live device allocations, for turning addresses into allocations: pointers found in kernel
// arguments, and the allocation named in a memory reason. Also remembers which allocations
// were live during the capture window, for the trace's "allocations" list.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "engine.hpp"

namespace nimble::deps::detail {

struct AllocRecord {
  std::int64_t id = 0;  // in order of allocation, over the whole run
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  AllocKind kind = AllocKind::Device;
  StreamHandle stream = kLegacyStream;
  // Window bookkeeping: the id the next task had when this was allocated / freed
  // (kNoTask: before the window / not freed in it).
  trace::TaskId allocated_before_task = kNoTask;
  trace::TaskId freed_before_task = kNoTask;
  bool freed = false;
};

class AllocationTable {
 public:
  // `next_task` is the id the next recorded task will get, or kNoTask outside the window.
  void allocated(std::uint64_t addr, std::uint64_t size, AllocKind kind, StreamHandle stream,
                 trace::TaskId next_task);
  void freed(std::uint64_t addr, trace::TaskId next_task);

  // The live allocation containing addr (interior pointers included), or nullptr. O(log n).
  const AllocRecord* find(std::uint64_t addr) const;

  std::vector<MemAccess> resolve_pointers(const std::uint8_t* args, std::size_t size,
                                          const std::vector<ParamLayout>& params,
                                          std::vector<trace::PointerRecord>* pointers) const;

  // Start a window: the allocations live now are the first of its list.
  void begin_window();
  // Allocations live at some point of the window, in id order.
  const std::vector<AllocRecord>& window() const { return window_; }

 private:
  void release(std::map<std::uint64_t, AllocRecord>::iterator it, trace::TaskId next_task);

  std::map<std::uint64_t, AllocRecord> live_;  // by base address; live ranges never overlap
  std::vector<AllocRecord> window_;
  std::unordered_map<std::int64_t, std::size_t> window_index_;  // id -> index in window_
  std::int64_t next_id_ = 0;
};

}  // namespace nimble::deps::detail
