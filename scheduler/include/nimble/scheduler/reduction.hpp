// Minimum equivalent graph (transitive reduction) of a DAG: the edges no longer path implies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nimble/scheduler/dag.hpp"

namespace nimble::scheduler {

struct ReductionOptions {
  unsigned threads = 0;                            // 0 = hardware concurrency
  std::size_t memory_per_thread = std::size_t{64} << 20;  // bytes of reach sets per worker
};

// One flag per edge of `predecessors` (in its storage order): 1 when a path of two or more edges
// also leads from the edge's source to its target. `predecessors` rows must be sorted and every
// predecessor must be below its node (see predecessor_adjacency).
std::vector<std::uint8_t> redundant_edges(const Adjacency& predecessors, const ReductionOptions& options = {});

// The predecessors with the redundant edges removed. For a DAG this graph is unique and has the
// same reachability as the input with the fewest edges.
Adjacency transitive_reduction(const Adjacency& predecessors, const ReductionOptions& options = {});

}  // namespace nimble::scheduler
