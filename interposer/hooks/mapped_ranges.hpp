// Virtual-memory mappings (cuMemMap / cuMemUnmap, e.g. PyTorch's expandable segments) as
// allocations the engine can resolve pointers against. A tensor may straddle two separately
// mapped pieces, so contiguous mapped pieces are coalesced into one allocation; mapping or
// unmapping a piece replaces the affected allocations. CUDA-free so CI tests it.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace nimble::hooks {

class MappedRanges {
 public:
  struct Change {
    bool allocate;        // true: register [addr, addr+size); false: release the one at addr
    std::uint64_t addr;
    std::uint64_t size;
  };

  // The allocation changes (releases first, then registrations) for one map / unmap.
  std::vector<Change> map(std::uint64_t addr, std::uint64_t size);
  std::vector<Change> unmap(std::uint64_t addr, std::uint64_t size);

  std::size_t run_count() const { return runs_.size(); }

 private:
  std::map<std::uint64_t, std::uint64_t> runs_;  // start -> end, disjoint and not adjacent
};

}  // namespace nimble::hooks
