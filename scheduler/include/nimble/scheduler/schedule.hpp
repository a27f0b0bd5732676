// The whole scheduler on a plain DAG: reduction, matching, chain merging, stream limit, waits,
// priorities and makespan estimates (docs/scheduler.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "nimble/scheduler/chains.hpp"
#include "nimble/scheduler/dag.hpp"
#include "nimble/scheduler/waits.hpp"

namespace nimble::scheduler {

struct Options {
  std::uint32_t max_streams = 0;  // 0 = unlimited (only as many as concurrency needs)
  bool merge_chains = true;       // false: one stream per chain, as in the paper's first step
  std::size_t merge_candidates = 64;  // per chain head when merging chains; 0 = exact, unbounded
  int priority_levels = 2;        // stream priorities 0 (highest) .. priority_levels-1
  unsigned threads = 0;           // workers for reachability; 0 = hardware concurrency
};

struct Schedule {
  StreamAssignment assignment;     // stream of every node; streams numbered by first node
  Waits waits;                     // per node, ascending; pruned of implied waits
  std::vector<int> stream_priorities;  // per stream, 0 = highest
};

struct PhaseTimes {  // wall-clock milliseconds
  double reduction = 0;   // minimum equivalent graph
  double matching = 0;    // Hopcroft-Karp and chains
  double merging = 0;     // chains onto shared streams
  double limiting = 0;    // max_streams
  double waits = 0;       // waits and their pruning
  double analysis = 0;    // critical path, slack, simulation, priorities, width bound
  double total = 0;
};

struct Stats {
  std::size_t tasks = 0;
  std::size_t edges = 0;             // distinct dependencies
  std::size_t meg_edges = 0;         // after transitive reduction
  std::size_t matching = 0;          // matched MEG edges (tasks chained onto a predecessor's stream)
  std::size_t chains = 0;            // tasks - matching: streams of the unmerged schedule
  std::size_t streams = 0;           // final
  std::size_t merge_candidate_pairs = 0;  // chain pairs considered for merging
  std::size_t merge_capped_heads = 0;     // chains whose candidate list was cut (merging not exact)
  std::size_t waits_before_pruning = 0;   // MEG edges across final streams
  std::size_t waits = 0;                  // after removing implied waits (the schedule's syncs)
  // Width of the DAG (largest set of mutually independent tasks) lies between these bounds:
  std::size_t width_lower_bound = 0;  // largest antichain found in linear time (width.hpp)
  std::size_t width_upper_bound = 0;  // streams after chain merging (a cover by ordered chains)
  std::size_t tasks_without_duration = 0;  // counted as kDefaultDurationUs each
  double serial_us = 0;              // makespan on one stream: sum of durations
  double critical_path_us = 0;       // makespan with unlimited streams: the lower bound
  double makespan_us = 0;            // simulated makespan of the produced schedule
  PhaseTimes time_ms;
};

struct ScheduleResult {
  Schedule schedule;
  Stats stats;
};

// Throws std::invalid_argument (naming the node) for a DAG that is not in topological order.
ScheduleResult schedule_dag(const Dag& dag, const Options& options = {});

}  // namespace nimble::scheduler
