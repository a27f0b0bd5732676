// validate_tasks: unique ids, dependencies on earlier tasks only (cycles explained), durations.
#include <gtest/gtest.h>

#include <cmath>

#include "nimble/trace/validate.hpp"
#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

Diagnostics check(const Trace& trace) {
  Diagnostics d;
  validate_tasks(trace, d);
  return d;
}

TEST(TaskChecks, ValidTraceHasNoDiagnostics) {
  const Diagnostics d = check(trace_with_deps({{}, {0}, {0}, {1, 2}}));
  EXPECT_TRUE(d.items.empty()) << dump(d);
}

TEST(TaskChecks, DuplicateIds) {
  Trace t = trace_with_deps({{}, {}, {}});
  t.tasks[2].id = 0;
  const Diagnostics d = check(t);
  ASSERT_EQ(d.error_count(), 1u) << dump(d);
  EXPECT_EQ(d.items[0].where, "task 0 (index 2), field \"id\"");
  EXPECT_NE(d.items[0].message.find("already used by the task at index 0"), std::string::npos);
}

TEST(TaskChecks, UnknownSelfAndRepeatedDependencies) {
  const Diagnostics d = check(trace_with_deps({{}, {42}, {2}, {0, 1, 0}}));
  EXPECT_NE(find(d, Severity::Error, "task 42, which does not exist", 1, "deps[0]"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "depends on itself", 2, "deps[0]"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "lists task 0 more than once", 3, "deps[2]"), nullptr) << dump(d);
  EXPECT_EQ(d.error_count(), 2u);
  EXPECT_EQ(d.warning_count(), 1u);
}

TEST(TaskChecks, LaterDependencyWithoutCycleSaysReorder) {
  const Diagnostics d = check(trace_with_deps({{}, {2}, {0}}));
  const Diagnostic* e = find(d, Severity::Error, "comes later in \"tasks\" (index 2)", 1, "deps[0]");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_NE(e->message.find("move task 2 before task 1"), std::string::npos) << e->message;
}

TEST(TaskChecks, CyclesAreNamed) {
  // 1 -> 3 -> 2 -> 1 (each arrow: depends on).
  const Diagnostics d = check(trace_with_deps({{}, {3}, {1}, {2}}));
  const Diagnostic* e = find(d, Severity::Error, "form a cycle", 1, "deps[0]");
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_NE(e->message.find("(1 -> 3 -> 2 -> 1)"), std::string::npos) << e->message;
  EXPECT_EQ(d.error_count(), 1u) << "only the edge that goes forward is wrong\n" << dump(d);
}

TEST(TaskChecks, TwoTaskCycleAndSeparateReorder) {
  const Diagnostics d = check(trace_with_deps({{1}, {0}, {3}, {}}));
  EXPECT_NE(find(d, Severity::Error, "form a cycle (0 -> 1 -> 0)", 0), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "move task 3 before task 2", 2), nullptr) << dump(d);
}

TEST(TaskChecks, DurationsMustBeFiniteAndNonNegative) {
  Trace t = trace_with_deps({{}, {}, {}, {}});
  t.tasks[0].duration_us = -1;
  t.tasks[1].duration_us = std::nan("");
  t.tasks[2].duration_us = INFINITY;
  t.tasks[3].duration_us = 0;
  const Diagnostics d = check(t);
  EXPECT_NE(find(d, Severity::Error, "must be >= 0", 0, "duration_us"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "finite", 1, "duration_us"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "finite", 2, "duration_us"), nullptr) << dump(d);
  EXPECT_EQ(d.error_count(), 3u);
}

TEST(TaskChecks, NonContiguousIdsWork) {
  Trace t = trace_with_deps({{}, {}, {}});
  t.tasks[0].id = 100;
  t.tasks[1].id = -5;
  t.tasks[1].deps = {100};
  t.tasks[2].id = 7;
  t.tasks[2].deps = {-5, 100, 8};
  const Diagnostics d = check(t);
  ASSERT_EQ(d.items.size(), 1u) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "task 8, which does not exist", 7, "deps[2]"), nullptr);
}

TEST(TaskChecks, ValidateTraceRunsEveryCheck) {
  Trace t = trace_with_deps({{}, {5}});
  t.tasks[0].extra["launch"] = {{"grid", {0, 1, 1}}, {"block", {1, 1, 1}}};
  t.tasks[0].schedule = TaskSchedule{};
  const Diagnostics d = validate_trace(t);
  EXPECT_NE(find(d, Severity::Error, "does not exist", 1), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "three integers", 0, "launch.grid"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "top level has none", std::nullopt, "schedule"), nullptr) << dump(d);
}

}  // namespace
}  // namespace nimble::trace::testing
