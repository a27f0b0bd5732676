#include "trace_builder.hpp"

namespace nimble::deps::detail {

namespace {

const char* alloc_kind_name(AllocKind kind) {
  switch (kind) {
    case AllocKind::Device: return "device";
    case AllocKind::Async: return "async";
    case AllocKind::Mapped: return "mapped";
    case AllocKind::Managed: return "managed";
    case AllocKind::Host: return "host";
    case AllocKind::ModuleGlobal: return "module-global";
  }
  return "device";
}

const char* stream_kind_name(StreamKind kind) {
  switch (kind) {
    case StreamKind::Legacy: return "legacy";
    case StreamKind::PerThread: return "per-thread";
    case StreamKind::Created: return "created";
  }
  return "created";
}

bool engine_field(const std::string& key) {
  return key == "id" || key == "kind" || key == "deps" || key == "stream" || key == "schedule" ||
         key == "duration_us" || key == "thread" || key == "dep_reasons" || key == "mem";
}

// `rec` by value: the engine's records are copied for build_trace and moved for take_trace (its
// detail, most of a task, then changes hands instead of being copied).
trace::Task make_task(trace::TaskId id, TaskRecord rec) {
  trace::Task task;
  task.id = id;
  task.kind = trace::kind_name(rec.kind);
  if (rec.stream >= 0) task.stream = rec.stream;
  task.extra["thread"] = rec.thread;
  if (rec.kernel) task.kernel = std::make_shared<const trace::KernelRecord>(std::move(*rec.kernel));
  if (rec.detail.is_object()) {
    for (auto& [key, value] : rec.detail.items()) {
      if (key == "duration_us" && value.is_number()) {
        task.duration_us = value.get<double>();
      } else if (engine_field(key)) {
        task.extra["detail_" + key] = std::move(value);  // keep it, but never let it override the engine's
      } else {
        task.extra[key] = std::move(value);
      }
    }
  } else if (!rec.detail.is_null()) {
    task.extra["detail"] = std::move(rec.detail);
  }
  if (!rec.mem.empty()) task.extra["mem"] = trace::to_json(rec.mem);
  trace::json reasons = trace::json::object();
  for (const Dep& dep : rec.deps) {
    task.deps.push_back(dep.task);
    reasons[std::to_string(dep.task)] = format_reasons(dep.reasons);
  }
  task.extra["dep_reasons"] = std::move(reasons);
  return task;
}

trace::json allocations_json(const std::vector<AllocRecord>& allocations) {
  trace::json out = trace::json::array();
  for (const AllocRecord& a : allocations) {
    trace::json entry = {{"id", a.id},
                         {"addr", trace::hex_address(a.addr)},
                         {"size", a.size},
                         {"kind", alloc_kind_name(a.kind)},
                         {"stream", trace::hex_address(a.stream)}};
    if (a.allocated_before_task != kNoTask) entry["allocated_before_task"] = a.allocated_before_task;
    if (a.freed) {
      entry["freed"] = true;
      entry["freed_before_task"] = a.freed_before_task;
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

trace::Trace build_trace(const TaskRecords& tasks,
                         const std::vector<StreamInfo*>& streams,
                         const std::vector<AllocRecord>& allocations, StreamOrderPolicy policy) {
  return build_trace(TaskRecords(tasks), streams, allocations, policy);
}

trace::json streams_json(const std::vector<StreamInfo*>& streams) {
  trace::json out = trace::json::array();
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const StreamInfo& s = *streams[i];
    trace::json entry = {{"index", i},
                         {"handle", trace::hex_address(s.handle)},
                         {"flags", s.flags},
                         {"priority", s.priority},
                         {"kind", stream_kind_name(s.kind)}};
    if (s.kind == StreamKind::PerThread) entry["thread"] = s.thread;
    if (!s.seen_created) entry["seen_created"] = false;  // assumed blocking
    out.push_back(std::move(entry));
  }
  return out;
}

trace::Trace build_trace(TaskRecords&& tasks, const std::vector<StreamInfo*>& streams,
                         const std::vector<AllocRecord>& allocations, StreamOrderPolicy policy) {
  return build_trace(std::move(tasks), streams_json(streams), allocations, policy);
}

trace::Trace build_trace(TaskRecords&& tasks, trace::json streams, const std::vector<AllocRecord>& allocations,
                         StreamOrderPolicy policy) {
  trace::Trace out;
  out.tasks.reserve(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    out.tasks.push_back(make_task(static_cast<trace::TaskId>(i), std::move(tasks[i])));
  }
  tasks.clear();
  out.extra["dependency_policy"] = stream_order_policy_name(policy);
  out.extra["streams"] = std::move(streams);
  out.extra["allocations"] = allocations_json(allocations);
  return out;
}

}  // namespace nimble::deps::detail
