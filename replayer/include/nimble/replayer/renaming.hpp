// Memory renaming for replay. A single-stream program lets its allocator hand a freed tensor's
// address to the next tensor at once, so the recorded dependencies include conflicts that exist
// only because two different allocations shared an address (e.g. two Inception branches).
// Replay gives every allocation freed inside the iteration its own shadow memory (plan.hpp), so
// those conflicts vanish: this recomputes the memory dependencies by allocation identity and
// keeps every dependency that has any other reason (events, host syncs, stream order, ...).
// The conflicts come from the dependency engine's MemoryState, one address region per allocation.
// CUDA-free.
#pragma once

#include <cstddef>

#include "nimble/trace/trace.hpp"

namespace nimble::replayer {

struct RenameStats {
  std::size_t edges_before = 0, edges_after = 0;
};

// Rewrites `deps` and `dep_reasons` of every task in place. Sound only for a replay that puts
// each freed allocation in memory of its own (as ReplayPlan does); the recorded trace on disk
// keeps the program's dependencies.
RenameStats rename_memory(trace::Trace& trace);

}  // namespace nimble::replayer
