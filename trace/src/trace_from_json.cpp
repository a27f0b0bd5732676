#include "trace_from_json.hpp"

#include <climits>
#include <functional>
#include <utility>

#include "json_checks.hpp"

namespace nimble::trace::detail {
namespace {

// Reports problems of one task: where = task id (or index while the id is unusable) and field.
struct TaskReporter {
  Diagnostics& out;
  std::size_t index;
  std::optional<TaskId> id;

  Location at(const std::string& field) const {
    return id ? at_task(*id, index, field) : at_task_index(index, field);
  }
  void error(const std::string& field, std::string message) const { out.error(at(field), std::move(message)); }
};

std::optional<int> read_int_field(const json& value, const std::string& field, std::int64_t min,
                                  const std::function<void(const std::string&, std::string)>& error) {
  const IntCheck check = check_int(value, min, INT_MAX);
  if (!check.value) {
    error(field, "\"" + field + "\" " + check.problem);
    return std::nullopt;
  }
  return static_cast<int>(*check.value);
}

std::vector<TaskId> read_id_list(const json& value, const std::string& field,
                                 const std::function<void(const std::string&, std::string)>& error) {
  std::vector<TaskId> ids;
  if (!value.is_array()) {
    error(field, "\"" + field + "\" must be an array of task ids, got " + describe_value(value));
    return ids;
  }
  ids.reserve(value.size());
  for (std::size_t k = 0; k < value.size(); ++k) {
    if (const auto id = as_int64(value[k])) {
      ids.push_back(*id);
    } else {
      const std::string element = field + "[" + std::to_string(k) + "]";
      error(element, "\"" + element + "\" must be a task id (an integer), got " + describe_value(value[k]));
    }
  }
  return ids;
}

std::optional<TaskSchedule> read_task_schedule(json&& value, const TaskReporter& report) {
  const auto error = [&](const std::string& field, std::string message) { report.error(field, std::move(message)); };
  if (!value.is_object()) {
    error("schedule", "\"schedule\" must be an object {\"stream\": <int>, \"waits\": [<ids>]}, got " +
                          describe_value(value));
    return std::nullopt;
  }
  TaskSchedule schedule;
  bool have_stream = false;
  for (auto& [key, member] : value.get_ref<json::object_t&>()) {
    if (key == "stream") {
      have_stream = true;
      if (auto stream = read_int_field(member, "schedule.stream", INT_MIN, error)) schedule.stream = *stream;
    } else if (key == "waits") {
      schedule.waits = read_id_list(member, "schedule.waits", error);
    } else {
      append_member(schedule.extra, key, std::move(member));
    }
  }
  if (!have_stream) error("schedule.stream", "missing \"schedule.stream\" (the stream index the task runs on)");
  return schedule;
}

// Returns nullopt when the task's id is unusable: such a task cannot be referred to.
std::optional<Task> read_task(json&& value, std::size_t index, Diagnostics& out) {
  TaskReporter report{out, index, std::nullopt};
  if (!value.is_object()) {
    report.error("", "each task must be a JSON object with \"id\", \"kind\" and \"deps\", got " +
                         describe_value(value));
    return std::nullopt;
  }
  auto& members = value.get_ref<json::object_t&>();

  // The id first: every other message about this task names it.
  bool id_usable = false;
  Task task;
  bool have_id = false;
  for (auto& [key, member] : members) {
    if (key != "id") continue;
    have_id = true;
    if (const IntCheck id = check_int(member); id.value) {
      task.id = *id.value;
      report.id = *id.value;
      id_usable = true;
    } else {
      report.error("id", "\"id\" " + id.problem);
    }
  }
  if (!have_id) report.error("id", "missing \"id\" (a unique integer)");

  const auto error = [&](const std::string& field, std::string message) { report.error(field, std::move(message)); };
  bool have_kind = false;
  bool have_deps = false;
  task.extra.get_ref<json::object_t&>().reserve(members.size());  // one allocation, not one per field
  for (auto& [key, member] : members) {
    if (key == "id") continue;
    if (key == "kind") {
      have_kind = true;
      if (!member.is_string()) {
        error("kind", "\"kind\" must be a string such as \"kernel\", got " + describe_value(member));
      } else if (member.get_ref<const std::string&>().empty()) {
        error("kind", "\"kind\" must not be empty; use e.g. \"kernel\", \"memcpy\" or \"memset\"");
      } else {
        task.kind = member.get<std::string>();
      }
    } else if (key == "deps") {
      have_deps = true;
      task.deps = read_id_list(member, "deps", error);
    } else if (key == "duration_us") {
      if (!member.is_number()) {
        error("duration_us", "\"duration_us\" must be a number of microseconds, got " + describe_value(member));
      } else {
        task.duration_us = member.get<double>();
      }
    } else if (key == "stream") {
      task.stream = read_int_field(member, "stream", INT_MIN, error);
    } else if (key == "schedule") {
      task.schedule = read_task_schedule(std::move(member), report);
    } else {
      append_member(task.extra, key, std::move(member));
    }
  }
  if (!have_kind) error("kind", "missing \"kind\" (e.g. \"kernel\", \"memcpy\", \"memset\")");
  if (!have_deps) error("deps", "missing \"deps\"; use [] for a task without dependencies");
  // The members were moved out; emptying the object now spares nlohmann's destructor a
  // temporary allocation per object (it flattens containers onto a heap stack).
  members.clear();
  if (!id_usable) return std::nullopt;
  return task;
}

std::optional<TraceSchedule> read_trace_schedule(json&& value, Diagnostics& out) {
  const auto error = [&](const std::string& field, std::string message) { out.error(at_top(field), std::move(message)); };
  if (!value.is_object()) {
    error("schedule", "\"schedule\" must be an object {\"algorithm\", \"streams\", \"syncs\"}, got " +
                          describe_value(value));
    return std::nullopt;
  }
  TraceSchedule schedule;
  bool have_algorithm = false, have_streams = false, have_syncs = false;
  for (auto& [key, member] : value.get_ref<json::object_t&>()) {
    if (key == "algorithm") {
      have_algorithm = true;
      if (member.is_string()) schedule.algorithm = member.get<std::string>();
      else error("schedule.algorithm", "\"schedule.algorithm\" must be a string, got " + describe_value(member));
    } else if (key == "streams") {
      have_streams = true;
      if (auto n = read_int_field(member, "schedule.streams", INT_MIN, error)) schedule.streams = *n;
    } else if (key == "syncs") {
      have_syncs = true;
      if (auto n = read_int_field(member, "schedule.syncs", INT_MIN, error)) schedule.syncs = *n;
    } else {
      append_member(schedule.extra, key, std::move(member));
    }
  }
  if (!have_algorithm) error("schedule.algorithm", "missing \"schedule.algorithm\" (the name of the scheduler)");
  if (!have_streams) error("schedule.streams", "missing \"schedule.streams\" (how many streams the schedule uses)");
  if (!have_syncs) error("schedule.syncs", "missing \"schedule.syncs\" (the number of waits in all tasks)");
  return schedule;
}

}  // namespace

std::optional<Trace> trace_from_json(json&& root, Diagnostics& out) {
  if (!root.is_object()) {
    out.error(at_top(), "the top level must be a JSON object with \"format\", \"version\" and \"tasks\", got " +
                            describe_value(root));
    return std::nullopt;
  }
  Trace trace;
  bool have_format = false, have_version = false, have_tasks = false;
  for (auto& [key, member] : root.get_ref<json::object_t&>()) {
    if (key == "format") {
      have_format = true;
      if (!member.is_string() || member.get_ref<const std::string&>() != kFormatName) {
        out.error(at_top("format"), std::string("\"format\" must be \"") + kFormatName + "\", got " +
                                        describe_value(member) + "; is this a nimble trace?");
      }
    } else if (key == "version") {
      have_version = true;
      const IntCheck check = check_int(member, INT_MIN, INT_MAX);
      if (!check.value) {
        out.error(at_top("version"), "\"version\" " + check.problem);
      } else {
        trace.version = static_cast<int>(*check.value);
        if (trace.version != kFormatVersion) {
          out.error(at_top("version"), "version " + std::to_string(trace.version) +
                                           " is not supported; this nimble reads version " +
                                           std::to_string(kFormatVersion));
        }
      }
    } else if (key == "tasks") {
      have_tasks = true;
      if (!member.is_array()) {
        out.error(at_top("tasks"), "\"tasks\" must be an array of task objects, got " + describe_value(member));
        continue;
      }
      auto& elements = member.get_ref<json::array_t&>();
      trace.tasks.reserve(elements.size());
      for (std::size_t i = 0; i < elements.size(); ++i) {
        if (auto task = read_task(std::move(elements[i]), i, out)) trace.tasks.push_back(std::move(*task));
      }
    } else if (key == "schedule") {
      trace.schedule = read_trace_schedule(std::move(member), out);
    } else {
      append_member(trace.extra, key, std::move(member));
    }
  }
  if (!have_format) out.error(at_top("format"), "missing \"format\": \"nimble-trace\"; is this a nimble trace?");
  if (!have_version) out.error(at_top("version"), "missing \"version\": 1");
  if (!have_tasks) out.error(at_top("tasks"), "missing \"tasks\" (an array of task objects)");
  return trace;
}

Location location_of(const json& root, const JsonPath& path, const std::string& leaf) {
  const auto field_from = [&](std::size_t first) {
    JsonPath rest(path.begin() + static_cast<std::ptrdiff_t>(first), path.end());
    std::string field = render_path(rest);
    if (!leaf.empty()) field += field.empty() ? leaf : "." + leaf;
    return field;
  };
  const bool in_task = path.size() >= 2 && std::holds_alternative<std::string>(path[0]) &&
                       std::get<std::string>(path[0]) == "tasks" &&
                       std::holds_alternative<std::size_t>(path[1]);
  if (!in_task || !root.is_object()) return at_top(field_from(0));
  const std::size_t index = std::get<std::size_t>(path[1]);
  const json* tasks = nullptr;
  for (const auto& [key, member] : root.get_ref<const json::object_t&>()) {
    if (key == "tasks") tasks = &member;
  }
  if (tasks && tasks->is_array() && index < tasks->size() && (*tasks)[index].is_object()) {
    for (const auto& [key, member] : (*tasks)[index].get_ref<const json::object_t&>()) {
      if (key == "id" && as_int64(member)) return at_task(*as_int64(member), index, field_from(2));
    }
  }
  return at_task_index(index, field_from(2));
}

}  // namespace nimble::trace::detail
