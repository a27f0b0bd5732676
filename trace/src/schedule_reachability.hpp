// Is every dependency finished before its task can start, under a schedule?
//
// A scheduled task starts after the previous task on its stream and after every task in its
// waits. A dependency d of task t is satisfied iff d is reachable backwards from t through those
// edges. Most dependencies are settled locally (same stream, or a wait on d's stream at or after
// d). The rest are answered with vector clocks: for each task, the latest task of each stream known
// to have finished before it starts. Clocks cover only streams that hold an unsettled dependency,
// 64 streams per pass, and are stored only for tasks that something waits on, so memory stays
// at about 256 bytes per waited-on task however many streams there are.
#pragma once

#include <cstddef>
#include <vector>

#include "nimble/trace/trace.hpp"
#include "task_index.hpp"

namespace nimble::trace::detail {

struct UnorderedDependency {
  std::size_t task;      // index in trace.tasks
  std::size_t dep;       // index of the dependency
  std::size_t position;  // position in task.deps
};

// Dependencies the schedule does not order before their task, sorted by task then position.
// Ignores what validate_tasks and validate_schedule report on their own: unknown, self and later
// ids, tasks without a schedule, and invalid waits (which then order nothing).
std::vector<UnorderedDependency> find_unordered_dependencies(const Trace& trace, const TaskIndex& index);

}  // namespace nimble::trace::detail
