// Brute-force references and random inputs for the scheduler tests. Deliberately naive: cubic
// closures and simple augmenting paths, easy to trust, only for small graphs.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "nimble/scheduler/dag.hpp"
#include "nimble/scheduler/schedule.hpp"

namespace nimble::scheduler::testing {

// reach[u][v]: a path of one or more edges leads from u to v.
using Closure = std::vector<std::vector<char>>;

// Random DAG on n nodes: each pair u < v is an edge with probability `density`; some predecessors
// are listed twice. Durations: none, all, or some (chosen at random), small integers incl. zero.
Dag random_dag(std::size_t n, double density, std::mt19937_64& rng);

// Floyd-Warshall over the edges u -> v for every predecessor u of v.
Closure floyd_warshall(const std::vector<std::vector<NodeIndex>>& predecessors);
Closure floyd_warshall(const Adjacency& predecessors);

// Edges (u, v) of the transitive reduction: u -> v is an edge and no w has u ->+ w ->+ v.
std::vector<std::pair<NodeIndex, NodeIndex>> reduction_by_closure(const Dag& dag, const Closure& reach);

// Size of a maximum matching by one augmenting-path search per left vertex (Kuhn).
std::size_t kuhn_matching_size(const std::vector<std::vector<NodeIndex>>& left_to_right, std::size_t right_count);

// The graph a schedule enforces: each node after its stream predecessor and after its waits.
std::vector<std::vector<NodeIndex>> sync_graph(const StreamAssignment& assignment, const Waits& waits);

}  // namespace nimble::scheduler::testing
