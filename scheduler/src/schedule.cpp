#include "nimble/scheduler/schedule.hpp"

#include <chrono>
#include <numeric>

#include "nimble/scheduler/chain_merge.hpp"
#include "nimble/scheduler/matching.hpp"
#include "nimble/scheduler/priorities.hpp"
#include "nimble/scheduler/reduction.hpp"
#include "nimble/scheduler/simulate.hpp"
#include "nimble/scheduler/stream_limit.hpp"
#include "nimble/scheduler/width.hpp"

namespace nimble::scheduler {
namespace {

class Stopwatch {
 public:
  double lap_ms() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace

ScheduleResult schedule_dag(const Dag& dag, const Options& options) {
  ScheduleResult result;
  Stats& stats = result.stats;
  Schedule& schedule = result.schedule;
  Stopwatch watch;
  const auto start = std::chrono::steady_clock::now();

  const Adjacency preds = predecessor_adjacency(dag);
  const Adjacency meg = transitive_reduction(preds, {.threads = options.threads});
  stats.tasks = dag.size();
  stats.edges = preds.edges();
  stats.meg_edges = meg.edges();
  stats.time_ms.reduction = watch.lap_ms();

  // Left = a task as predecessor, right = a task as successor: a matched MEG edge u->v puts v
  // right after u on u's stream, so every match saves one wait and one stream.
  const Matching matching = maximum_matching(reverse(meg), dag.size());
  const ChainCover cover = chains_from_matching(matching);
  stats.matching = matching.size;
  stats.chains = cover.chains.size();
  stats.time_ms.matching = watch.lap_ms();

  if (options.merge_chains) {
    ChainMerge merged = merge_chains(meg, cover, {.candidates_per_chain = options.merge_candidates});
    schedule.assignment = std::move(merged.assignment);
    stats.merge_candidate_pairs = merged.candidate_pairs;
    stats.merge_capped_heads = merged.capped_heads;
  } else {
    schedule.assignment = one_stream_per_chain(cover);
  }
  stats.width_upper_bound = schedule.assignment.streams;
  stats.time_ms.merging = watch.lap_ms();

  const std::vector<double> durations = durations_or_default(dag, &stats.tasks_without_duration);
  const Timeline earliest = earliest_timeline(meg, durations);
  const std::vector<double> slack = slack_us(meg, durations, earliest);
  stats.time_ms.analysis = watch.lap_ms();

  limit_streams(schedule.assignment, options.max_streams, meg, durations, slack);
  stats.streams = schedule.assignment.streams;
  stats.time_ms.limiting = watch.lap_ms();

  schedule.waits = cross_stream_waits(meg, schedule.assignment);
  stats.waits_before_pruning = count_waits(schedule.waits);
  prune_implied_waits(schedule.waits, schedule.assignment, WaitPruning::automatic, options.threads);
  stats.waits = count_waits(schedule.waits);
  stats.time_ms.waits = watch.lap_ms();

  stats.serial_us = std::accumulate(durations.begin(), durations.end(), 0.0);
  stats.critical_path_us = earliest.makespan_us;
  stats.makespan_us = simulate_schedule(schedule.assignment, schedule.waits, durations).makespan_us;
  stats.width_lower_bound = width_lower_bound(meg, earliest);
  schedule.stream_priorities =
      stream_priorities(schedule.assignment, slack, stats.critical_path_us, options.priority_levels);
  stats.time_ms.analysis += watch.lap_ms();
  stats.time_ms.total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace nimble::scheduler
