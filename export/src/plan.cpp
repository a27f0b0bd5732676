#include "nimble/export/plan.hpp"

#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "nimble/scheduler/trace_schedule.hpp"

namespace nimble::exporter {
namespace {

std::string where(const trace::Task& task, std::size_t index, const char* field) {
  return "task " + std::to_string(task.id) + " (index " + std::to_string(index) + "), field \"" + field + "\"";
}

// Reads a plan out of a trace whose tasks all carry a schedule.
ScheduleView read_plan(const trace::Trace& trace) {
  const std::size_t n = trace.tasks.size();
  ScheduleView plan;
  plan.algorithm = trace.schedule->algorithm;
  if (trace.schedule->streams < 0) {
    throw std::invalid_argument("top level, field \"schedule.streams\": negative stream count");
  }
  plan.streams = static_cast<std::uint32_t>(trace.schedule->streams);
  plan.stream_of.resize(n);
  plan.waits.resize(n);
  std::unordered_map<trace::TaskId, std::size_t> index_of;
  index_of.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Task& task = trace.tasks[i];
    if (!task.schedule) throw std::invalid_argument(where(task, i, "schedule") + ": missing in a scheduled trace");
    const int stream = task.schedule->stream;
    if (stream < 0 || static_cast<std::uint32_t>(stream) >= plan.streams) {
      throw std::invalid_argument(where(task, i, "schedule.stream") + ": " + std::to_string(stream) +
                                  " is outside [0, " + std::to_string(plan.streams) + ")");
    }
    plan.stream_of[i] = static_cast<std::uint32_t>(stream);
    for (trace::TaskId id : task.schedule->waits) {
      const auto it = index_of.find(id);
      if (it == index_of.end()) {
        throw std::invalid_argument(where(task, i, "schedule.waits") + ": " + std::to_string(id) +
                                    " is not the id of an earlier task");
      }
      plan.waits[i].push_back(it->second);
      ++plan.syncs;
    }
    index_of.emplace(task.id, i);
  }
  return plan;
}

void read_priorities(const trace::TraceSchedule& schedule, ScheduleView& plan) {
  const auto it = schedule.extra.find("stream_priorities");
  if (it == schedule.extra.end() || !it->is_array() || it->size() != plan.streams) return;
  std::vector<std::optional<int>> priorities;
  for (const auto& value : *it) {
    if (!value.is_number_integer()) return;
    const auto p = value.get<std::int64_t>();
    if (p < std::numeric_limits<int>::min() || p > std::numeric_limits<int>::max()) return;
    priorities.emplace_back(static_cast<int>(p));
  }
  plan.priorities = std::move(priorities);
}

}  // namespace

ScheduleView make_plan(const trace::Trace& trace, const PlanOptions& options) {
  const bool stored = trace.schedule.has_value() && !options.reschedule;
  ScheduleView plan;
  if (stored) {
    plan = read_plan(trace);
    read_priorities(*trace.schedule, plan);
    plan.description = "the schedule stored in the trace (" + plan.algorithm + ", " +
                       std::to_string(plan.streams) + " streams, " + std::to_string(plan.syncs) + " waits)";
    return plan;
  }
  trace::Trace copy = trace;  // the export never changes its input
  scheduler::Options scheduling;
  scheduling.max_streams = options.max_streams;
  scheduler::schedule_trace(copy, scheduling);
  plan = read_plan(copy);
  read_priorities(*copy.schedule, plan);
  plan.computed = true;
  plan.max_streams = options.max_streams;
  plan.description = std::string("computed by nimble export (") +
                     (trace.schedule ? "--reschedule: the stored schedule is ignored"
                                     : "the trace has no schedule") +
                     "): " + plan.algorithm + " with " +
                     (options.max_streams == 0 ? std::string("unlimited streams")
                                               : "at most " + std::to_string(options.max_streams) + " streams") +
                     ", giving " + std::to_string(plan.streams) + " streams and " + std::to_string(plan.syncs) +
                     " waits";
  return plan;
}

std::string plan_lane_name(const ScheduleView& plan, std::uint32_t stream) {
  std::string name = "stream " + std::to_string(stream);
  if (stream < plan.priorities.size() && plan.priorities[stream]) {
    name += " (priority " + std::to_string(*plan.priorities[stream]) + ")";
  }
  return name;
}

}  // namespace nimble::exporter
