// validate_tasks: unique ids, dependencies on earlier tasks only, sane durations and streams.
#include <cmath>
#include <string>

#include "dependency_cycles.hpp"
#include "nimble/trace/validate.hpp"
#include "task_index.hpp"

namespace nimble::trace {
namespace {

// Paths spelled out for the first few cycles; finding one is a breadth-first search.
constexpr std::size_t kMaxCyclesSpelledOut = 10;

struct LaterDependency {
  std::size_t task;  // index of the task that lists the dependency
  std::size_t dep;   // index of the dependency, > task
  std::size_t position;  // position in deps
};

std::string dep_field(std::size_t position) { return "deps[" + std::to_string(position) + "]"; }

detail::CompactGraph dependency_graph(const Trace& trace, const detail::TaskIndex& index) {
  detail::CompactGraph graph;
  graph.offsets.reserve(trace.tasks.size() + 1);
  graph.offsets.push_back(0);
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    for (const TaskId dep : trace.tasks[i].deps) {
      const auto j = index.find(dep);
      if (j && *j != i) graph.targets.push_back(static_cast<std::uint32_t>(*j));
    }
    graph.offsets.push_back(static_cast<std::uint32_t>(graph.targets.size()));
  }
  return graph;
}

std::string spell_cycle(const Trace& trace, const std::vector<std::uint32_t>& path) {
  std::string text;
  for (const auto node : path) {
    if (!text.empty()) text += " -> ";
    text += std::to_string(trace.tasks[node].id);
  }
  return text;
}

// A dependency on a later task: say whether reordering fixes it or the deps form a cycle.
void report_later_dependencies(const Trace& trace, const detail::TaskIndex& index,
                               const std::vector<LaterDependency>& later, Diagnostics& out) {
  if (later.empty()) return;
  const detail::CompactGraph graph = dependency_graph(trace, index);
  const auto component = detail::strongly_connected_components(graph);
  std::size_t cycles_spelled = 0;
  for (const auto& edge : later) {
    const Task& task = trace.tasks[edge.task];
    const Task& dep = trace.tasks[edge.dep];
    std::string message = "depends on task " + std::to_string(dep.id) + ", which comes later in \"tasks\" (index " +
                          std::to_string(edge.dep) + "); ";
    if (component[edge.task] == component[edge.dep]) {
      std::string cycle;
      if (cycles_spelled++ < kMaxCyclesSpelledOut) {
        const auto back = detail::path_within_component(graph, component, static_cast<std::uint32_t>(edge.dep),
                                                        static_cast<std::uint32_t>(edge.task));
        if (!back.empty()) cycle = " (" + std::to_string(task.id) + " -> " + spell_cycle(trace, back) + ")";
      }
      message += "the dependencies form a cycle" + cycle +
                 ", which no order can satisfy; remove one of the dependencies in the cycle";
    } else {
      message += "tasks must be listed in a topological order: move task " + std::to_string(dep.id) +
                 " before task " + std::to_string(task.id);
    }
    out.error(at_task(task.id, edge.task, dep_field(edge.position)), message);
  }
}

}  // namespace

void validate_tasks(const Trace& trace, Diagnostics& out) {
  const detail::TaskIndex index(trace);
  std::vector<LaterDependency> later;
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    const Task& task = trace.tasks[i];
    const auto first = index.find(task.id);
    if (first && *first != i) {
      out.error(at_task(task.id, i, "id"), "id " + std::to_string(task.id) + " is already used by the task at index " +
                                               std::to_string(*first) + "; ids must be unique");
    }

    const std::vector<std::size_t> repeats = detail::repeated_positions(task.deps);
    for (const std::size_t k : repeats) {
      out.warning(at_task(task.id, i, dep_field(k)),
                  "lists task " + std::to_string(task.deps[k]) + " more than once; remove the repeat");
    }
    for (std::size_t k = 0, next_repeat = 0; k < task.deps.size(); ++k) {
      if (next_repeat < repeats.size() && repeats[next_repeat] == k) {
        ++next_repeat;
        continue;
      }
      const TaskId dep = task.deps[k];
      if (dep == task.id) {
        out.error(at_task(task.id, i, dep_field(k)), "depends on itself; remove " + std::to_string(dep) + " from \"deps\"");
        continue;
      }
      const auto j = index.find(dep);
      if (!j) {
        out.error(at_task(task.id, i, dep_field(k)), "depends on task " + std::to_string(dep) +
                                                         ", which does not exist; remove it from \"deps\" or add that task");
      } else if (*j > i) {
        later.push_back({i, *j, k});
      }
    }

    if (task.duration_us) {
      const double us = *task.duration_us;
      if (!std::isfinite(us)) {
        out.error(at_task(task.id, i, "duration_us"), "\"duration_us\" must be a finite number of microseconds");
      } else if (us < 0) {
        out.error(at_task(task.id, i, "duration_us"),
                  "\"duration_us\" is " + json(us).dump() + "; durations must be >= 0 (microseconds)");
      }
    }
    if (task.stream && *task.stream < 0) {
      out.error(at_task(task.id, i, "stream"), "\"stream\" is " + std::to_string(*task.stream) +
                                                   "; stream indexes start at 0");
    }
  }
  report_later_dependencies(trace, index, later, out);
}

}  // namespace nimble::trace
