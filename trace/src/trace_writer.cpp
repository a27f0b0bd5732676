// to_json / dump_trace: the typed model back to JSON in nimble's canonical layout.
// Known fields come first in a fixed order, extra fields follow in the order they were read, so
// writing what nimble wrote reproduces it byte for byte.
#include <cmath>
#include <initializer_list>
#include <string_view>

#include "json_checks.hpp"
#include "json_pretty.hpp"
#include "nimble/trace/io.hpp"
#include "nimble/trace/recorded.hpp"

namespace nimble::trace {
namespace {

using detail::append_member;

// Extra fields that collide with a typed one (possible only in traces built in memory) would
// write a key twice; the typed field wins. `after_thread`: fields that go right after "thread"
// (a kernel's typed fields, where the recorder puts them), or first when there is none.
void append_extras(json& object, const json& extra, std::initializer_list<std::string_view> known,
                   const json& after_thread = json::object()) {
  const auto append_after_thread = [&] {
    for (const auto& [key, value] : after_thread.items()) append_member(object, key, value);
  };
  const bool has_thread = extra.is_object() && extra.contains("thread");
  if (!has_thread) append_after_thread();
  if (!extra.is_object()) return;
  for (const auto& [key, value] : extra.get_ref<const json::object_t&>()) {
    bool collides = after_thread.contains(key);
    for (const auto name : known) collides = collides || key == name;
    if (!collides) append_member(object, key, value);
    if (key == "thread") append_after_thread();
  }
}

// Whole microseconds are written as integers ("12", not "12.0"): what people write by hand, and
// it reads back to the same double.
json duration_json(double us) {
  constexpr double kExactIntegerLimit = 9007199254740992.0;  // 2^53
  if (std::isfinite(us) && us == std::floor(us) && std::fabs(us) <= kExactIntegerLimit) {
    return json(static_cast<std::int64_t>(us));
  }
  return json(us);
}

json task_json(const Task& task) {
  json object = json::object();
  append_member(object, "id", task.id);
  append_member(object, "kind", task.kind);
  append_member(object, "deps", task.deps);
  if (task.duration_us) append_member(object, "duration_us", duration_json(*task.duration_us));
  if (task.stream) append_member(object, "stream", *task.stream);
  json kernel = json::object();
  if (task.kernel) add_fields(kernel, *task.kernel);
  append_extras(object, task.extra, {"id", "kind", "deps", "duration_us", "stream", "schedule"}, kernel);
  if (task.schedule) {
    json schedule = json::object();
    append_member(schedule, "stream", task.schedule->stream);
    append_member(schedule, "waits", task.schedule->waits);
    append_extras(schedule, task.schedule->extra, {"stream", "waits"});
    append_member(object, "schedule", std::move(schedule));
  }
  return object;
}

}  // namespace

json to_json(const Trace& trace) {
  json document = json::object();
  append_member(document, "format", kFormatName);
  append_member(document, "version", trace.version);
  if (trace.schedule) {
    json schedule = json::object();
    append_member(schedule, "algorithm", trace.schedule->algorithm);
    append_member(schedule, "streams", trace.schedule->streams);
    append_member(schedule, "syncs", trace.schedule->syncs);
    append_extras(schedule, trace.schedule->extra, {"algorithm", "streams", "syncs"});
    append_member(document, "schedule", std::move(schedule));
  }
  append_extras(document, trace.extra, {"format", "version", "schedule", "tasks"});
  json tasks = json::array();
  tasks.get_ref<json::array_t&>().reserve(trace.tasks.size());
  for (const auto& task : trace.tasks) tasks.push_back(task_json(task));
  append_member(document, "tasks", std::move(tasks));
  return document;
}

std::string dump_trace(const Trace& trace) {
  // Top level, the task list and each task are always one member per line; values inside a
  // task go on one line when they fit.
  const json document = to_json(trace);
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : document.get_ref<const json::object_t&>()) {
    out += first ? "\n  " : ",\n  ";
    first = false;
    detail::write_string(key, out);
    out += ": ";
    if (key == "tasks") {
      out += value.empty() ? "[]" : "[";
      bool first_task = true;
      for (const auto& task : value) {
        out += first_task ? "\n    " : ",\n    ";
        first_task = false;
        detail::write_pretty(task, 4, 4, false, out);
      }
      if (!value.empty()) out += "\n  ]";
    } else {
      detail::write_pretty(value, 2, 4 + key.size() + 2, true, out);
    }
  }
  out += "\n}\n";
  return out;
}

}  // namespace nimble::trace
