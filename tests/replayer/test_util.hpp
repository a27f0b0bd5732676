// Helpers for the replayer's CPU tests: synthetic traces written as JSON text.
#pragma once

#include <string>

#include "nimble/replayer/plan.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::replayer::test {

// Parses `text` with trace::parse_trace; a trace with errors fails the test (the diagnostics are
// printed) and returns an empty trace.
trace::Trace parse(const std::string& text);

// A trace document around `tasks` (the text of the task objects, comma separated) and optional
// top-level fields (`top`, text of members, comma separated, without a trailing comma).
std::string document(const std::string& tasks, const std::string& top = "");

// The text of a replayable kernel task: function 0x1000 + id, grid [1,1,1], block [32,1,1], an
// 8-byte argument buffer with one parameter. `extra` (members, comma separated) is appended.
std::string kernel(long id, const std::string& deps, const std::string& extra = "");

// build_plan that also checks the result is self-consistent: a plan xor problems.
PlanResult plan_of(const trace::Trace& trace);

// All problems joined by newlines, for failure messages.
std::string joined(const PlanResult& result);

}  // namespace nimble::replayer::test
