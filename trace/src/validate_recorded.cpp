// validate_recorded_fields: types of the optional fields the recorder writes. None is required.
#include "nimble/trace/validate.hpp"
#include "recorded_fields.hpp"

namespace nimble::trace {

void validate_recorded_fields(const Trace& trace, Diagnostics& out) {
  const detail::FieldChecker top(out, [](const std::string& path) { return at_top(path); });
  const detail::RecordedContext context = detail::check_recorded_top_level(trace.extra, top);
  for (std::size_t i = 0; i < trace.tasks.size(); ++i) {
    const Task& task = trace.tasks[i];
    const detail::FieldChecker checker(out, [&](const std::string& path) { return at_task(task.id, i, path); });
    detail::check_recorded_task(task, context, checker);
  }
}

}  // namespace nimble::trace
