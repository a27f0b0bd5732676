#include "nimble/export/perfetto.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include "nimble/export/names.hpp"
#include "nimble/scheduler/simulate.hpp"
#include "nimble/scheduler/trace_schedule.hpp"

namespace nimble::exporter {
namespace {

using trace::json;

std::string dump(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

// Timestamps are whole nanoseconds internally, written as microseconds ("ts", "dur").
double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::optional<double> number_field(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<std::string> string_field(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

json metadata(const char* what, int pid, std::optional<int> tid, const json& args) {
  json event;
  event["name"] = what;
  event["ph"] = "M";
  event["pid"] = pid;
  if (tid) event["tid"] = *tid;
  event["args"] = args;
  return event;
}

// "stream 1 (created, priority 0)" from the top-level "streams" entry with that index, if any.
std::string recorded_lane_name(const trace::Trace& trace, int stream) {
  std::string name = "stream " + std::to_string(stream);
  const auto streams = trace.extra.find("streams");
  if (streams == trace.extra.end() || !streams->is_array()) return name;
  for (const auto& entry : *streams) {
    if (!entry.is_object()) continue;
    const auto index = entry.find("index");
    if (index == entry.end() || !index->is_number_integer() || index->get<std::int64_t>() != stream) continue;
    std::vector<std::string> details;
    if (auto kind = string_field(entry, "kind")) details.push_back(*kind);
    const auto priority = entry.find("priority");
    if (priority != entry.end() && priority->is_number_integer()) {
      details.push_back("priority " + std::to_string(priority->get<std::int64_t>()));
    }
    if (auto handle = string_field(entry, "handle")) details.push_back(*handle);
    if (!details.empty()) {
      name += " (";
      for (std::size_t i = 0; i < details.size(); ++i) name += (i ? ", " : "") + details[i];
      name += ")";
    }
    break;
  }
  return name;
}

// The slice args shared by both processes: what the task is and why it waits.
json task_args(const trace::Task& task, const std::optional<std::string>& library_call) {
  json args;
  args["id"] = task.id;
  args["kind"] = task.kind;
  const std::string full = full_task_name(task);
  if (!full.empty()) args["name"] = full;
  args["deps"] = task.deps;
  if (task.duration_us) {
    args["duration_us"] = *task.duration_us;
  } else {
    args["duration_us"] = "unknown (drawn " + format_us(scheduler::kDefaultDurationUs) + " us)";
  }
  if (task.stream) args["program_stream"] = *task.stream;
  if (auto api = string_field(task.extra, "api")) args["api"] = *api;
  if (library_call) args["library_call"] = *library_call;
  const auto launch = task.extra.find("launch");
  if (launch != task.extra.end() && launch->is_object()) {
    for (const char* key : {"grid", "block", "cluster", "shared_mem_bytes"}) {
      const auto it = launch->find(key);
      if (it != launch->end()) args[key] = *it;
    }
  }
  const auto reasons = task.extra.find("dep_reasons");
  if (reasons != task.extra.end() && reasons->is_object() && !reasons->empty()) args["dep_reasons"] = *reasons;
  return args;
}

struct Slice {
  int tid = 0;
  std::int64_t start_ns = 0;
  std::int64_t dur_ns = 0;
};

json slice_event(const std::string& name, const std::string& category, int pid,
                 const Slice& slice, json args) {
  json event;
  event["name"] = name;
  event["cat"] = category;
  event["ph"] = "X";
  event["pid"] = pid;
  event["tid"] = slice.tid;
  event["ts"] = us(slice.start_ns);
  event["dur"] = us(slice.dur_ns);
  event["args"] = std::move(args);
  return event;
}

std::string plural(std::size_t count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

}  // namespace

PerfettoExport export_perfetto(const trace::Trace& trace, const PerfettoOptions& options) {
  PerfettoExport out;
  const std::size_t n = trace.tasks.size();
  out.tasks = n;
  out.plan = make_plan(trace, options.plan);
  const ScheduleView& plan = out.plan;

  // Durations (whole nanoseconds), names and categories, shared by both processes.
  std::vector<std::int64_t> dur_ns(n);
  std::vector<std::string> names(n);
  std::vector<std::string> categories(n);
  std::vector<std::optional<std::string>> library_calls(n);
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Task& task = trace.tasks[i];
    if (!task.duration_us) ++out.tasks_without_duration;
    dur_ns[i] = to_ns(task.duration_us.value_or(scheduler::kDefaultDurationUs));
    names[i] = display_name(task, options.max_name_length);
    library_calls[i] = string_field(task.extra, "library_call");
    if (library_calls[i] && library_calls[i]->empty()) library_calls[i].reset();
    categories[i] = task.kind + (library_calls[i] ? "," + *library_calls[i] : std::string());
  }

  // Recorded lanes: one per program stream in ascending order, then one for tasks without a
  // stream (host synchronisations); a single lane when the trace names no streams at all.
  std::map<int, std::size_t> lane_of_stream;
  bool any_without_stream = false;
  for (const auto& task : trace.tasks) {
    if (task.stream) {
      lane_of_stream.emplace(*task.stream, 0);
    } else {
      any_without_stream = true;
    }
  }
  std::vector<std::string> recorded_lanes;
  for (auto& [stream, lane] : lane_of_stream) {
    lane = recorded_lanes.size();
    recorded_lanes.push_back(recorded_lane_name(trace, stream));
  }
  const std::size_t no_stream_lane = recorded_lanes.size();
  if (any_without_stream || recorded_lanes.empty()) {
    recorded_lanes.push_back(lane_of_stream.empty() ? "all tasks (the trace records no streams)"
                                                    : "no stream (host synchronisations)");
  }
  out.recorded_lanes = recorded_lanes.size();
  const auto recorded_tid = [](std::size_t lane) { return static_cast<int>(1 + lane); };
  // Thread ids are unique across both processes: Perfetto keys thread names by tid alone.
  const auto plan_tid = [&](std::uint32_t stream) {
    return static_cast<int>(1 + recorded_lanes.size() + stream);
  };

  // Recorded placement: start_us when present, otherwise right after the task issued before.
  std::vector<Slice> recorded(n);
  std::vector<std::int64_t> lane_end(recorded_lanes.size(), 0);
  std::int64_t previous_end = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Task& task = trace.tasks[i];
    const std::size_t lane = task.stream ? lane_of_stream.at(*task.stream) : no_stream_lane;
    Slice& slice = recorded[i];
    slice.tid = recorded_tid(lane);
    if (auto start = number_field(task.extra, "start_us")) {
      slice.start_ns = to_ns(*start);
      ++out.recorded_with_start;
    } else {
      slice.start_ns = previous_end;
    }
    slice.dur_ns = dur_ns[i];
    previous_end = slice.start_ns + slice.dur_ns;
    if (slice.start_ns < lane_end[lane]) ++out.recorded_overlaps;
    lane_end[lane] = std::max(lane_end[lane], previous_end);
    out.recorded_span_us = std::max(out.recorded_span_us, us(previous_end));
  }

  // The plan's timeline: scheduler::simulate_schedule on the durations in nanoseconds, so that
  // every start is exactly the end of what it waited for.
  scheduler::StreamAssignment assignment{plan.stream_of, plan.streams};
  scheduler::Waits waits(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t u : plan.waits[i]) waits[i].push_back(static_cast<scheduler::NodeIndex>(u));
  }
  std::vector<double> durations(n);
  for (std::size_t i = 0; i < n; ++i) durations[i] = static_cast<double>(dur_ns[i]);
  const scheduler::Timeline timeline = scheduler::simulate_schedule(assignment, waits, durations);
  std::vector<Slice> planned(n);
  for (std::size_t i = 0; i < n; ++i) {
    planned[i] = {plan_tid(plan.stream_of[i]), static_cast<std::int64_t>(timeline.start_us[i]), dur_ns[i]};
  }
  out.plan_makespan_us = us(static_cast<std::int64_t>(timeline.makespan_us));

  // Process names say where the times come from.
  std::string unknown_note;
  if (out.tasks_without_duration > 0) {
    unknown_note = "; " + plural(out.tasks_without_duration, "task", "tasks") + " of unknown duration drawn " +
                   format_us(scheduler::kDefaultDurationUs) + " us";
  }
  std::string recorded_times;
  if (n > 0 && out.recorded_with_start == n) {
    recorded_times = "recorded GPU start times";
  } else if (out.recorded_with_start == 0) {
    recorded_times = "no recorded times: back to back in issue order";
  } else {
    recorded_times = "recorded start times for " + std::to_string(out.recorded_with_start) + " of " +
                     std::to_string(n) + " tasks, the others right after the task issued before";
  }
  const std::string recorded_process =
      "recorded (" +
      (lane_of_stream.empty() ? std::string("no program streams in the trace")
                              : plural(lane_of_stream.size(), "program stream", "program streams")) +
      "; " + recorded_times + unknown_note + ")";
  const std::string plan_process =
      "scheduled plan (" + plural(plan.streams, "stream", "streams") + ", " + plural(plan.syncs, "wait", "waits") +
      "; " + (plan.computed ? "computed by nimble export, " : "") + "simulated, makespan " +
      format_us(out.plan_makespan_us) + " us" + unknown_note + ")";

  std::vector<json> events;
  events.reserve(2 * n + 2 * plan.syncs + recorded_lanes.size() * 2 + plan.streams * 2 + 4);

  // Process 1: recorded.
  events.push_back(metadata("process_name", kRecordedPid, std::nullopt, {{"name", recorded_process}}));
  events.push_back(metadata("process_sort_index", kRecordedPid, std::nullopt, {{"sort_index", 0}}));
  for (std::size_t lane = 0; lane < recorded_lanes.size(); ++lane) {
    events.push_back(metadata("thread_name", kRecordedPid, recorded_tid(lane), {{"name", recorded_lanes[lane]}}));
    events.push_back(metadata("thread_sort_index", kRecordedPid, recorded_tid(lane),
                              {{"sort_index", static_cast<int>(lane)}}));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Task& task = trace.tasks[i];
    json args = task_args(task, library_calls[i]);
    if (auto start = number_field(task.extra, "start_us")) {
      args["start_us"] = *start;
    } else {
      args["start_us"] = "not recorded (placed after the task issued before)";
    }
    events.push_back(slice_event(names[i], categories[i], kRecordedPid, recorded[i], std::move(args)));
  }

  // Process 2: the plan.
  events.push_back(metadata("process_name", kPlanPid, std::nullopt, {{"name", plan_process}}));
  events.push_back(metadata("process_sort_index", kPlanPid, std::nullopt, {{"sort_index", 1}}));
  for (std::uint32_t s = 0; s < plan.streams; ++s) {
    events.push_back(metadata("thread_name", kPlanPid, plan_tid(s), {{"name", plan_lane_name(plan, s)}}));
    events.push_back(metadata("thread_sort_index", kPlanPid, plan_tid(s), {{"sort_index", static_cast<int>(s)}}));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Task& task = trace.tasks[i];
    json args = task_args(task, library_calls[i]);
    args["stream"] = plan.stream_of[i];
    json wait_ids = json::array();
    for (std::size_t u : plan.waits[i]) wait_ids.push_back(trace.tasks[u].id);
    args["waits"] = std::move(wait_ids);
    events.push_back(slice_event(names[i], categories[i], kPlanPid, planned[i], std::move(args)));
  }
  // Waits as flow arrows: start inside the waited-for slice, end bound to the waiting slice
  // ("bp": "e"). Both sit at the middle of their slice so that neither viewer binds them to a
  // neighbour that starts or ends at the same instant.
  std::int64_t flow_id = 0;
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t u : plan.waits[v]) {
      ++flow_id;
      json start;
      start["name"] = "wait";
      start["cat"] = "wait";
      start["ph"] = "s";
      start["id"] = flow_id;
      start["pid"] = kPlanPid;
      start["tid"] = planned[u].tid;
      start["ts"] = us(planned[u].start_ns + planned[u].dur_ns / 2);
      start["args"] = {{"from", trace.tasks[u].id}, {"to", trace.tasks[v].id}};
      events.push_back(std::move(start));
      json finish;
      finish["name"] = "wait";
      finish["cat"] = "wait";
      finish["ph"] = "f";
      finish["bp"] = "e";
      finish["id"] = flow_id;
      finish["pid"] = kPlanPid;
      finish["tid"] = planned[v].tid;
      finish["ts"] = us(planned[v].start_ns + planned[v].dur_ns / 2);
      finish["args"] = {{"from", trace.tasks[u].id}, {"to", trace.tasks[v].id}};
      events.push_back(std::move(finish));
    }
  }
  out.flows = static_cast<std::size_t>(flow_id);

  json other;
  other["generator"] = "nimble export --format perfetto";
  if (!options.source.empty()) other["source"] = options.source;
  other["time_unit"] = "ts and dur are microseconds";
  other["tasks"] = n;
  other["tasks_without_duration"] = out.tasks_without_duration;
  if (out.tasks_without_duration > 0) other["default_duration_us"] = scheduler::kDefaultDurationUs;
  json recorded_info;
  recorded_info["pid"] = kRecordedPid;
  recorded_info["process"] = recorded_process;
  recorded_info["lanes"] = recorded_lanes;
  recorded_info["tasks_with_start_us"] = out.recorded_with_start;
  recorded_info["placement"] =
      "a task with start_us starts there; a task without one starts when the task issued before it ends";
  recorded_info["overlapping_slices"] = out.recorded_overlaps;
  recorded_info["span_us"] = out.recorded_span_us;
  other["recorded"] = std::move(recorded_info);
  json plan_info;
  plan_info["pid"] = kPlanPid;
  plan_info["process"] = plan_process;
  plan_info["source"] = plan.computed ? "computed" : "stored";
  plan_info["description"] = plan.description;
  plan_info["algorithm"] = plan.algorithm;
  plan_info["streams"] = plan.streams;
  plan_info["waits"] = plan.syncs;
  if (plan.computed) plan_info["max_streams"] = plan.max_streams;
  plan_info["timing"] =
      "simulated (scheduler::simulate_schedule): a task starts when the task before it on its stream and "
      "every task it waits for have finished; durations from duration_us";
  plan_info["makespan_us"] = out.plan_makespan_us;
  other["plan"] = std::move(plan_info);

  std::string& text = out.text;
  text = "{\"traceEvents\": [\n";
  for (std::size_t i = 0; i < events.size(); ++i) {
    text += dump(events[i]);
    text += i + 1 < events.size() ? ",\n" : "\n";
  }
  text += "],\n\"otherData\": ";
  text += dump(other);
  text += "}\n";
  return out;
}

}  // namespace nimble::exporter
