// Where each shadow allocation lives in the one block of shadow memory. Replay gives allocations
// freed inside the iteration memory of their own (plan.hpp); one slot each would make the
// replay's working set the sum of every temporary tensor, far past the L2 cache, where the
// program's allocator kept reusing a few hot addresses. Two shadows may share a slot when the
// dependency graph already orders every use of the first before every use of the second: no
// backend can then run them concurrently, and no dependency is added. CUDA-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nimble::replayer {

struct ShadowLayout {
  std::vector<std::uint64_t> offsets;  // per shadow, from the start of the block (256-aligned)
  std::uint64_t bytes = 0;             // the block
  std::size_t reused = 0;              // shadows placed in a slot an earlier shadow used
};

struct ShadowUse {
  std::uint64_t size = 0;
  std::vector<std::size_t> ops;        // ops touching it, ascending
  bool shareable = false;              // allocated inside the iteration: its first contents do not matter
};

// `predecessors[i]`: the ops op i depends on (any edges whose transitive closure is the DAG;
// issue order is a topological order). Above `max_ops` ops, no sharing (the reachability sets
// this needs grow with the square of the ops).
ShadowLayout layout_shadows(const std::vector<ShadowUse>& shadows,
                            const std::vector<std::vector<std::size_t>>& predecessors,
                            std::size_t max_ops = 16384);

}  // namespace nimble::replayer
