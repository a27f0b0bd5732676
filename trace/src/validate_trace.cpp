#include "nimble/trace/validate.hpp"

namespace nimble::trace {

Diagnostics validate_trace(const Trace& trace) {
  Diagnostics out;
  validate_tasks(trace, out);
  validate_recorded_fields(trace, out);
  validate_schedule(trace, out);
  return out;
}

}  // namespace nimble::trace
