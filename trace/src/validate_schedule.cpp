// validate_schedule: the "schedule" sections, and that the schedule keeps every dependency.
#include <string>

#include "nimble/trace/validate.hpp"
#include "schedule_reachability.hpp"
#include "task_index.hpp"

namespace nimble::trace {
namespace {

std::string wait_field(std::size_t position) { return "schedule.waits[" + std::to_string(position) + "]"; }

void check_top_level(const TraceSchedule& schedule, Diagnostics& out) {
  if (schedule.streams < 1) {
    out.error(at_top("schedule.streams"), "\"schedule.streams\" is " + std::to_string(schedule.streams) +
                                              "; a schedule uses at least 1 stream");
  }
  if (schedule.syncs < 0) {
    out.error(at_top("schedule.syncs"), "\"schedule.syncs\" is " + std::to_string(schedule.syncs) +
                                            "; it counts waits and cannot be negative");
  }
}

// Stream range and waits of one task; returns how many waits it lists.
std::size_t check_task_schedule(const Trace& trace, const detail::TaskIndex& index, std::size_t i,
                                Diagnostics& out) {
  const Task& task = trace.tasks[i];
  const TaskSchedule& schedule = *task.schedule;
  const int streams = trace.schedule ? trace.schedule->streams : 0;
  if (schedule.stream < 0) {
    out.error(at_task(task.id, i, "schedule.stream"),
              "\"schedule.stream\" is " + std::to_string(schedule.stream) + "; streams are numbered from 0");
  } else if (streams >= 1 && schedule.stream >= streams) {
    out.error(at_task(task.id, i, "schedule.stream"),
              "\"schedule.stream\" is " + std::to_string(schedule.stream) + " but the schedule has " +
                  std::to_string(streams) + " streams (0 to " + std::to_string(streams - 1) +
                  "); use one of those or raise the top-level \"schedule.streams\"");
  }

  const std::vector<std::size_t> repeats = detail::repeated_positions(schedule.waits);
  for (const std::size_t k : repeats) {
    out.warning(at_task(task.id, i, wait_field(k)),
                "waits for task " + std::to_string(schedule.waits[k]) + " more than once; remove the repeat");
  }
  for (std::size_t k = 0, next_repeat = 0; k < schedule.waits.size(); ++k) {
    if (next_repeat < repeats.size() && repeats[next_repeat] == k) {
      ++next_repeat;
      continue;
    }
    const TaskId wait = schedule.waits[k];
    const auto w = index.find(wait);
    const bool valid_earlier = w && *w < i;
    if (valid_earlier && !(trace.tasks[*w].schedule && trace.tasks[*w].schedule->stream == schedule.stream)) {
      continue;  // the common case: no message to build
    }
    const Location where = at_task(task.id, i, wait_field(k));
    const std::string named = "task " + std::to_string(wait);
    if (wait == task.id) {
      out.error(where, "waits for itself; remove " + std::to_string(wait) + " from \"schedule.waits\"");
    } else if (!w) {
      out.error(where, "waits for " + named + ", which does not exist; remove it from \"schedule.waits\"");
    } else if (*w > i) {
      out.error(where, "waits for " + named + ", which comes later in \"tasks\" (index " + std::to_string(*w) +
                           "); a task can only wait for earlier tasks");
    } else {
      out.warning(where, "waits for " + named + ", which is on the same stream (" + std::to_string(schedule.stream) +
                             ") and so finishes first anyway; the wait is redundant");
    }
  }
  return schedule.waits.size();
}

void report_unordered_dependencies(const Trace& trace, const detail::TaskIndex& index, Diagnostics& out) {
  for (const auto& broken : detail::find_unordered_dependencies(trace, index)) {
    if (out.full()) {  // there can be 100,000 of them: count the rest without building messages
      ++out.suppressed_errors;
      continue;
    }
    const Task& task = trace.tasks[broken.task];
    const Task& dep = trace.tasks[broken.dep];
    const std::string dep_id = std::to_string(dep.id);
    const std::string dep_stream = std::to_string(dep.schedule->stream);
    out.error(at_task(task.id, broken.task, "schedule"),
              "depends on task " + dep_id + " (stream " + dep_stream + "), but the schedule can start it on stream " +
                  std::to_string(task.schedule->stream) + " before task " + dep_id +
                  " finishes: nothing it waits for, directly or through stream order, comes at or after task " +
                  dep_id + "; add " + dep_id + " to \"schedule.waits\" or move the task to stream " + dep_stream);
  }
}

}  // namespace

void validate_schedule(const Trace& trace, Diagnostics& out) {
  std::size_t scheduled = 0;
  for (const auto& task : trace.tasks) scheduled += task.schedule.has_value();
  if (!trace.schedule && scheduled == 0) return;  // not a scheduled trace

  if (trace.schedule) {
    check_top_level(*trace.schedule, out);
  } else {
    out.error(at_top("schedule"), std::to_string(scheduled) +
                                      " task(s) have a \"schedule\" but the top level has none; add "
                                      "\"schedule\": {\"algorithm\": ..., \"streams\": ..., \"syncs\": ...}");
  }
  if (scheduled == 0) {
    out.error(at_top("schedule"), "the top level has a \"schedule\" but no task has one; give every task "
                                  "\"schedule\": {\"stream\": ..., \"waits\": [...]} or remove the top-level one");
    return;
  }

  const detail::TaskIndex index(trace);
  std::size_t waits = 0;
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    const Task& task = trace.tasks[i];
    if (!task.schedule) {
      out.error(at_task(task.id, i, "schedule"),
                "missing \"schedule\" while other tasks have one; in a scheduled trace every task needs "
                "\"schedule\": {\"stream\": ..., \"waits\": [...]}");
      continue;
    }
    waits += check_task_schedule(trace, index, i, out);
  }
  if (trace.schedule && trace.schedule->syncs >= 0 && static_cast<std::size_t>(trace.schedule->syncs) != waits) {
    out.warning(at_top("schedule.syncs"), "\"schedule.syncs\" is " + std::to_string(trace.schedule->syncs) +
                                              " but the tasks list " + std::to_string(waits) +
                                              " waits in all; set it to " + std::to_string(waits));
  }
  report_unordered_dependencies(trace, index, out);
}

}  // namespace nimble::trace
