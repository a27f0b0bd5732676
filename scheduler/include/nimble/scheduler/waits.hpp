// Cross-stream synchronisation: which earlier tasks each task waits for.
#pragma once

#include <cstddef>
#include <vector>

#include "nimble/scheduler/chains.hpp"

namespace nimble::scheduler {

// waits[v]: nodes on other streams that must finish before v starts, ascending.
using Waits = std::vector<std::vector<NodeIndex>>;

// One wait per MEG edge whose ends are on different streams. Edges within a stream need none:
// stream order is issue order, which is topological. Enforces every dependency of the DAG.
Waits cross_stream_waits(const Adjacency& meg_predecessors, const StreamAssignment& assignment);

std::size_t count_waits(const Waits& waits);

enum class WaitPruning {
  automatic,      // vector clocks when they fit in memory, otherwise reachability
  vector_clocks,  // O(streams) per kept wait; memory streams x (streams + waited-on tasks)
  reachability,   // transitive reduction of the graph of stream order plus waits
};

// Removes every wait already implied by stream order and the other waits (a path of them leads
// from the waited-on task to the waiting one). Both methods give the same, unique result.
// Returns the number of waits removed.
std::size_t prune_implied_waits(Waits& waits, const StreamAssignment& assignment,
                                WaitPruning method = WaitPruning::automatic, unsigned threads = 0);

}  // namespace nimble::scheduler
