// Capping the number of streams (beyond the paper): merge the streams whose union costs least.
#pragma once

#include <cstdint>
#include <span>

#include "nimble/scheduler/chains.hpp"

namespace nimble::scheduler {

// Merges streams until at most max_streams remain (no-op when max_streams is 0 or already met).
// Merged streams run their tasks in issue order, which is topological, so any merge is correct;
// the choice only affects speed. Heuristic (docs/scheduler.md, "Limiting streams"): simulate the
// current schedule, keep the max_streams most important streams (those with critical-path tasks
// first, then the busiest) and put every other stream, busiest first, onto the kept stream whose
// busy time it overlaps least, i.e. where it would have to wait least. O(max_streams * N log N).
void limit_streams(StreamAssignment& assignment, std::uint32_t max_streams, const Adjacency& meg_predecessors,
                   std::span<const double> durations_us, std::span<const double> slack_us);

}  // namespace nimble::scheduler
