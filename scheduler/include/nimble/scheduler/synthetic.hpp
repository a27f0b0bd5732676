// Synthetic task graphs for benchmarks and tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nimble/scheduler/dag.hpp"

namespace nimble::scheduler {

// A DAG shaped like one training iteration of a convolutional network, with exactly `tasks` nodes
// and a duration for each. Forward pass: a chain of blocks (plain layers, residual blocks with skip
// connections, Inception blocks with 2-5 parallel branches, dense concatenations of earlier block
// outputs), then a loss. Backward pass in reverse: per layer a gradient task depending on its
// consumers' gradients and on saved forward activations far back, plus weight-gradient tasks;
// then optimizer updates. The same (tasks, seed) always gives the same DAG.
Dag make_network_dag(std::size_t tasks, std::uint64_t seed);

// A structureless stress case: every task depends on `predecessors` tasks drawn uniformly from all
// earlier ones (fewer for the first tasks), durations uniform in [1, 50) us. Deterministic.
Dag make_uniform_random_dag(std::size_t tasks, std::size_t predecessors, std::uint64_t seed);

}  // namespace nimble::scheduler
