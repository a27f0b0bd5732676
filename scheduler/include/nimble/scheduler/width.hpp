// Bounds on the DAG's width, the largest set of mutually independent tasks: the most streams a
// schedule with no lost concurrency could need. Computing it exactly (Dilworth: a matching on the
// transitive closure) does not scale, so the scheduler reports bounds.
#pragma once

#include <cstddef>

#include "nimble/scheduler/dag.hpp"
#include "nimble/scheduler/simulate.hpp"

namespace nimble::scheduler {

// Most tasks of positive duration running at once in a timeline. In the earliest (ASAP) timeline
// such tasks are pairwise unordered, i.e. an antichain.
std::size_t max_concurrency(const Timeline& timeline);

// The largest of three antichains found in linear time: tasks of equal depth (longest path from a
// source, in edges), tasks of equal height (longest path to a sink) and max_concurrency(earliest).
// Tasks on one path always differ in depth and in height, so each set is an antichain.
std::size_t width_lower_bound(const Adjacency& predecessors, const Timeline& earliest);

}  // namespace nimble::scheduler
