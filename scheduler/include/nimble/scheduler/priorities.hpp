// Stream priorities: streams that carry the critical path should win when the GPU is contended.
#pragma once

#include <span>
#include <vector>

#include "nimble/scheduler/chains.hpp"

namespace nimble::scheduler {

// Priorities in CUDA's convention, 0 = highest, up to levels-1: 0 for streams holding a task with
// no slack (on a critical path); the others spread over levels 1..levels-1 in equal shares of
// their rank by least slack. levels <= 1 gives every stream 0.
std::vector<int> stream_priorities(const StreamAssignment& assignment, std::span<const double> slack_us,
                                   double critical_path_us, int levels);

}  // namespace nimble::scheduler
