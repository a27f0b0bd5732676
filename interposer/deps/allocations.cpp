#include "allocations.hpp"

#include <algorithm>
#include <cstring>

namespace nimble::deps::detail {

void AllocationTable::allocated(std::uint64_t addr, std::uint64_t size, AllocKind kind,
                                StreamHandle stream, trace::TaskId next_task) {
  // Live allocations overlapping the new one were freed through a path we did not see;
  // drop them so lookups find the new one.
  auto it = live_.upper_bound(addr);
  if (it != live_.begin() && std::prev(it)->second.addr + std::prev(it)->second.size > addr) --it;
  while (it != live_.end() && (it->first < addr + size || it->first == addr)) {
    auto next = std::next(it);
    release(it, next_task);
    it = next;
  }
  AllocRecord rec{next_id_++, addr, size, kind, stream, next_task, kNoTask, false};
  live_.emplace(addr, rec);
  if (next_task != kNoTask) {
    window_index_[rec.id] = window_.size();
    window_.push_back(rec);
  }
}

void AllocationTable::freed(std::uint64_t addr, trace::TaskId next_task) {
  if (auto it = live_.find(addr); it != live_.end()) release(it, next_task);
}

void AllocationTable::release(std::map<std::uint64_t, AllocRecord>::iterator it,
                              trace::TaskId next_task) {
  if (next_task != kNoTask) {
    if (auto w = window_index_.find(it->second.id); w != window_index_.end()) {
      window_[w->second].freed = true;
      window_[w->second].freed_before_task = next_task;
    }
  }
  live_.erase(it);
}

const AllocRecord* AllocationTable::find(std::uint64_t addr) const {
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return nullptr;
  --it;
  return addr - it->second.addr < it->second.size ? &it->second : nullptr;
}

std::vector<MemAccess> AllocationTable::resolve_pointers(const std::uint8_t* args, std::size_t size,
                                                         const std::vector<ParamLayout>& params,
                                                         std::vector<trace::PointerRecord>* pointers) const {
  std::vector<MemAccess> out;
  std::vector<std::int64_t> seen;  // one access per allocation, however often it is passed
  if (args == nullptr || live_.empty()) return out;
  // Live ranges never overlap, so [lowest base, end of the highest one) bounds them all;
  // most scalar arguments (small integers, floats) fall outside without a tree lookup.
  const std::uint64_t lowest = live_.begin()->first;
  const std::uint64_t highest_end = live_.rbegin()->first + live_.rbegin()->second.size;
  for (const ParamLayout& p : params) {
    const std::uint64_t end = std::min<std::uint64_t>(std::uint64_t{p.offset} + p.size, size);
    // Pointers are 8-byte aligned in the argument buffer, including inside struct arguments.
    for (std::uint64_t off = (std::uint64_t{p.offset} + 7) & ~std::uint64_t{7}; off + 8 <= end;
         off += 8) {
      std::uint64_t value;
      std::memcpy(&value, args + off, sizeof value);
      if (value < lowest || value >= highest_end) continue;
      const AllocRecord* alloc = find(value);
      if (alloc == nullptr) continue;
      if (pointers != nullptr) {
        pointers->push_back({static_cast<std::uint32_t>(off), alloc->id, value - alloc->addr});
      }
      if (std::find(seen.begin(), seen.end(), alloc->id) != seen.end()) continue;
      seen.push_back(alloc->id);
      // Where the kernel reads or writes inside the allocation is unknown: all of it, both ways.
      out.push_back(MemAccess{alloc->addr, alloc->size, Access::ReadWrite, false});
    }
  }
  return out;
}

void AllocationTable::begin_window() {
  window_.clear();
  window_index_.clear();
  for (const auto& [addr, rec] : live_) window_.push_back(rec);
  std::sort(window_.begin(), window_.end(),
            [](const AllocRecord& a, const AllocRecord& b) { return a.id < b.id; });
  for (std::size_t i = 0; i < window_.size(); ++i) {
    window_[i].allocated_before_task = kNoTask;
    window_index_[window_[i].id] = i;
  }
}

}  // namespace nimble::deps::detail
