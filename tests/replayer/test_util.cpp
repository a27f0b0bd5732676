#include "test_util.hpp"

#include <gtest/gtest.h>

#include "nimble/trace/io.hpp"

namespace nimble::replayer::test {

trace::Trace parse(const std::string& text) {
  trace::LoadResult loaded = trace::parse_trace(text);
  if (!loaded.trace || loaded.diagnostics.has_errors()) {
    ADD_FAILURE() << "synthetic trace rejected:\n" << loaded.diagnostics.format("<test>") << text;
    return {};
  }
  return std::move(*loaded.trace);
}

std::string document(const std::string& tasks, const std::string& top) {
  return R"({"format": "nimble-trace", "version": 1, )" + (top.empty() ? "" : top + ", ") + R"("tasks": [)" +
         tasks + "]}";
}

std::string kernel(long id, const std::string& deps, const std::string& extra) {
  char function[32];
  std::snprintf(function, sizeof function, "0x%lx", 0x1000 + id);
  return R"({"id": )" + std::to_string(id) + R"(, "kind": "kernel", "deps": )" + deps +
         R"(, "name": "k)" + std::to_string(id) + R"(", "function": ")" + function +
         R"(", "launch": {"grid": [1, 1, 1], "block": [32, 1, 1]}, "args": {"bytes": "0100000002000000", "params": [{"offset": 0, "size": 8}]})" +
         (extra.empty() ? "" : ", " + extra) + "}";
}

PlanResult plan_of(const trace::Trace& trace) {
  PlanResult result = build_plan(trace);
  EXPECT_NE(result.plan.has_value(), !result.problems.empty())
      << "build_plan must give a plan or problems, not both or neither:\n" << joined(result);
  return result;
}

std::string joined(const PlanResult& result) {
  std::string out;
  for (const std::string& p : result.problems) out += p + "\n";
  return out;
}

}  // namespace nimble::replayer::test
