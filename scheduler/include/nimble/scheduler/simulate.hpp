// Makespan model: GPU tasks with known durations, infinitely many hardware queues, no launch cost.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "nimble/scheduler/chains.hpp"
#include "nimble/scheduler/waits.hpp"

namespace nimble::scheduler {

struct Timeline {
  std::vector<double> start_us;
  std::vector<double> finish_us;
  double makespan_us = 0;
};

// As-soon-as-possible timeline of the DAG itself: a task starts when all predecessors finished.
// Its makespan is the critical path length, the lower bound for any schedule.
Timeline earliest_timeline(const Adjacency& predecessors, std::span<const double> durations_us);

// The produced schedule: each stream runs its tasks in issue order; a task starts when its stream
// predecessor and every task it waits for have finished.
Timeline simulate_schedule(const StreamAssignment& assignment, const Waits& waits,
                           std::span<const double> durations_us);

// How long each task could be delayed without lengthening the critical path (0 on it).
std::vector<double> slack_us(const Adjacency& predecessors, std::span<const double> durations_us,
                             const Timeline& earliest);

}  // namespace nimble::scheduler
