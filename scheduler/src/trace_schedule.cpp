#include "nimble/scheduler/trace_schedule.hpp"

#include <stdexcept>
#include <string>
#include <unordered_map>

namespace nimble::scheduler {

Dag dag_from_trace(const trace::Trace& trace) {
  const std::size_t n = trace.tasks.size();
  std::unordered_map<trace::TaskId, NodeIndex> index_of;
  index_of.reserve(n);
  Dag dag;
  dag.predecessors.resize(n);
  bool any_duration = false;
  for (NodeIndex i = 0; i < n; ++i) {
    const trace::Task& task = trace.tasks[i];
    for (trace::TaskId dep : task.deps) {
      const auto it = index_of.find(dep);
      if (it == index_of.end()) {
        throw std::invalid_argument("task " + std::to_string(task.id) + " (index " + std::to_string(i) +
                                    "), field \"deps\": " + std::to_string(dep) +
                                    " is not the id of an earlier task");
      }
      dag.predecessors[i].push_back(it->second);
    }
    if (!index_of.emplace(task.id, i).second) {
      throw std::invalid_argument("task " + std::to_string(task.id) + " (index " + std::to_string(i) +
                                  "), field \"id\": duplicate id");
    }
    any_duration |= task.duration_us.has_value();
  }
  if (any_duration) {
    dag.durations_us.reserve(n);
    for (const auto& task : trace.tasks) dag.durations_us.push_back(task.duration_us);
  }
  return dag;
}

trace::json stats_to_json(const Stats& s) {
  trace::json j;
  j["tasks"] = s.tasks;
  j["edges"] = s.edges;
  j["meg_edges"] = s.meg_edges;
  j["matching"] = s.matching;
  j["chains"] = s.chains;
  j["streams"] = s.streams;
  j["merge_candidate_pairs"] = s.merge_candidate_pairs;
  j["merge_capped_heads"] = s.merge_capped_heads;
  j["waits_before_pruning"] = s.waits_before_pruning;
  j["waits"] = s.waits;
  j["width"] = {{"lower_bound", s.width_lower_bound}, {"upper_bound", s.width_upper_bound}};
  j["tasks_without_duration"] = s.tasks_without_duration;
  j["makespan_us"] = {{"serial", s.serial_us}, {"critical_path", s.critical_path_us}, {"schedule", s.makespan_us}};
  j["time_ms"] = {{"reduction", s.time_ms.reduction}, {"matching", s.time_ms.matching},
                  {"merging", s.time_ms.merging},     {"limiting", s.time_ms.limiting},
                  {"waits", s.time_ms.waits},         {"analysis", s.time_ms.analysis},
                  {"total", s.time_ms.total}};
  return j;
}

Stats schedule_trace(trace::Trace& trace, const Options& options) {
  const ScheduleResult result = schedule_dag(dag_from_trace(trace), options);
  const Schedule& schedule = result.schedule;
  for (NodeIndex i = 0; i < trace.tasks.size(); ++i) {
    trace::Task& task = trace.tasks[i];
    trace::TaskSchedule placed;
    if (task.schedule) placed.extra = task.schedule->extra;  // unknown fields the user added survive
    placed.stream = static_cast<int>(schedule.assignment.stream_of[i]);
    for (NodeIndex u : schedule.waits[i]) placed.waits.push_back(trace.tasks[u].id);
    task.schedule = std::move(placed);
  }
  const Stats& s = result.stats;
  trace::TraceSchedule top;
  top.algorithm = kAlgorithmName;
  top.streams = static_cast<int>(s.streams);
  top.syncs = static_cast<int>(s.waits);
  top.extra["stream_priorities"] = schedule.stream_priorities;
  top.extra["makespan_us"] = {{"serial", s.serial_us}, {"critical_path", s.critical_path_us}, {"schedule", s.makespan_us}};
  if (s.tasks_without_duration > 0) {
    top.extra["tasks_without_duration"] = s.tasks_without_duration;
    top.extra["default_duration_us"] = kDefaultDurationUs;
  }
  top.extra["max_streams"] = options.max_streams;
  top.extra["meg_edges"] = s.meg_edges;
  top.extra["chains"] = s.chains;
  top.extra["width"] = {{"lower_bound", s.width_lower_bound}, {"upper_bound", s.width_upper_bound}};
  trace.schedule = std::move(top);
  return s;
}

}  // namespace nimble::scheduler
