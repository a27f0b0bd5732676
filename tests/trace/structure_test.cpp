// Missing and ill-typed fields: each message names the task (id, or index when the id is
// unusable) and the field.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

// Parses a document and expects it refused with an error containing `text` at `field` of task
// `id` (or of the top level when id is nullopt).
void expect_error(const std::string& document, std::string_view text, std::optional<TaskId> id, const std::string& field) {
  const auto r = parse_trace(document);
  EXPECT_FALSE(r.trace) << "accepted:\n" << document;
  const Diagnostic* d = find(r.diagnostics, Severity::Error, text, id, field);
  ASSERT_NE(d, nullptr) << "wanted \"" << text << "\" at field " << field << "\n" << dump(r.diagnostics);
  if (id) {
    EXPECT_NE(d->where.find("task " + std::to_string(*id) + " (index "), std::string::npos) << d->where;
  } else if (d->where.rfind("task at index", 0) != 0) {
    EXPECT_EQ(d->where.rfind("top level", 0), 0u) << d->where;
  }
  EXPECT_NE(d->where.find("field \"" + field + "\""), std::string::npos) << d->where;
}

std::string one_task(const std::string& task) { return trace_text(task); }

TEST(Structure, TopLevelFields) {
  expect_error(R"({"version": 1, "tasks": []})", "missing \"format\"", std::nullopt, "format");
  expect_error(R"({"format": "chrome-trace", "version": 1, "tasks": []})", "is this a nimble trace?", std::nullopt, "format");
  expect_error(R"({"format": "nimble-trace", "tasks": []})", "missing \"version\": 1", std::nullopt, "version");
  expect_error(R"({"format": "nimble-trace", "version": 2, "tasks": []})", "version 2 is not supported", std::nullopt, "version");
  expect_error(R"({"format": "nimble-trace", "version": "1", "tasks": []})", "must be an integer, got a string", std::nullopt, "version");
  expect_error(R"({"format": "nimble-trace", "version": 1})", "missing \"tasks\"", std::nullopt, "tasks");
  expect_error(R"({"format": "nimble-trace", "version": 1, "tasks": {}})", "must be an array of task objects", std::nullopt, "tasks");
}

TEST(Structure, TasksMustBeObjects) {
  const auto r = parse_trace(trace_text(R"({"id": 0, "kind": "k", "deps": []}, "kernel", 7, [1])"));
  ASSERT_FALSE(r.trace);
  EXPECT_EQ(r.diagnostics.error_count(), 3u) << dump(r.diagnostics);
  EXPECT_EQ(r.diagnostics.items[0].where, "task at index 1");
  EXPECT_NE(r.diagnostics.items[0].message.find("must be a JSON object"), std::string::npos);
  EXPECT_NE(r.diagnostics.items[0].message.find("a string (\"kernel\")"), std::string::npos);
  EXPECT_EQ(r.diagnostics.items[2].where, "task at index 3");
}

TEST(Structure, Ids) {
  const auto at_index = [](const std::string& task, std::string_view text) {
    const auto r = parse_trace(one_task(task));
    EXPECT_FALSE(r.trace);
    const Diagnostic* d = find(r.diagnostics, Severity::Error, text, std::nullopt, "id");
    ASSERT_NE(d, nullptr) << dump(r.diagnostics);
    EXPECT_EQ(d->where, "task at index 0, field \"id\"");
  };
  at_index(R"({"kind": "k", "deps": []})", "missing \"id\"");
  at_index(R"({"id": "3", "kind": "k", "deps": []})", "must be an integer, got a string (\"3\")");
  at_index(R"({"id": 1.5, "kind": "k", "deps": []})", "a number with a fraction");
  at_index(R"({"id": 2.0, "kind": "k", "deps": []})", "without a decimal point");
  at_index(R"({"id": 1e30, "kind": "k", "deps": []})", "must be an integer");
  at_index(R"({"id": 18446744073709551615, "kind": "k", "deps": []})", "too large for 64 bits");
  at_index(R"({"id": 99999999999999999999999, "kind": "k", "deps": []})", "must be an integer");
  at_index(R"({"id": null, "kind": "k", "deps": []})", "got null");
}

TEST(Structure, KindAndDeps) {
  expect_error(one_task(R"({"id": 3, "deps": []})"), "missing \"kind\"", 3, "kind");
  expect_error(one_task(R"({"id": 3, "kind": 1, "deps": []})"), "must be a string", 3, "kind");
  expect_error(one_task(R"({"id": 3, "kind": "", "deps": []})"), "must not be empty", 3, "kind");
  expect_error(one_task(R"({"id": 3, "kind": "k"})"), "use [] for a task without dependencies", 3, "deps");
  expect_error(one_task(R"({"id": 3, "kind": "k", "deps": 2})"), "must be an array of task ids", 3, "deps");
  expect_error(trace_text(R"({"id": 1, "kind": "k", "deps": []}, {"id": 3, "kind": "k", "deps": [1, "1"]})"),
               "must be a task id (an integer), got a string", 3, "deps[1]");
}

TEST(Structure, DurationAndStream) {
  expect_error(one_task(R"({"id": 3, "kind": "k", "deps": [], "duration_us": "5"})"), "must be a number of microseconds", 3, "duration_us");
  expect_error(one_task(R"({"id": 3, "kind": "k", "deps": [], "duration_us": -0.5})"), "must be >= 0", 3, "duration_us");
  expect_error(one_task(R"({"id": 3, "kind": "k", "deps": [], "duration_us": null})"), "got null", 3, "duration_us");
  expect_error(one_task(R"({"id": 3, "kind": "k", "deps": [], "stream": "0"})"), "must be an integer", 3, "stream");
  expect_error(one_task(R"({"id": 3, "kind": "k", "deps": [], "stream": -1})"), "start at 0", 3, "stream");
  expect_error(one_task(R"({"id": 3, "kind": "k", "deps": [], "stream": 4294967296})"), "at most 2147483647", 3, "stream");
}

TEST(Structure, ScheduleFields) {
  const std::string top = R"("schedule": {"algorithm": "a", "streams": 2, "syncs": 0},)";
  expect_error(trace_text(R"({"id": 3, "kind": "k", "deps": [], "schedule": 1})", top), "must be an object", 3, "schedule");
  expect_error(trace_text(R"({"id": 3, "kind": "k", "deps": [], "schedule": {"waits": []}})", top),
               "missing \"schedule.stream\"", 3, "schedule.stream");
  expect_error(trace_text(R"({"id": 3, "kind": "k", "deps": [], "schedule": {"stream": 0, "waits": 5}})", top),
               "must be an array of task ids", 3, "schedule.waits");
  expect_error(trace_text(R"({"id": 3, "kind": "k", "deps": [], "schedule": {"stream": 0.5}})", top),
               "must be an integer", 3, "schedule.stream");
  expect_error(trace_text("", R"("schedule": [],)"), "must be an object", std::nullopt, "schedule");
  expect_error(trace_text("", R"("schedule": {"streams": 1, "syncs": 0},)"), "missing \"schedule.algorithm\"", std::nullopt,
               "schedule.algorithm");
  expect_error(trace_text("", R"("schedule": {"algorithm": "a", "syncs": 0},)"), "missing \"schedule.streams\"", std::nullopt,
               "schedule.streams");
  expect_error(trace_text("", R"("schedule": {"algorithm": "a", "streams": 1},)"), "missing \"schedule.syncs\"", std::nullopt,
               "schedule.syncs");
}

TEST(Structure, EveryProblemIsReported) {
  // Five different problems in five places: five diagnostics, in one pass.
  const auto r = parse_trace(R"({
    "format": "nimble-trace",
    "version": 1,
    "tasks": [
      {"id": 0, "kind": "memcpy", "deps": []},
      {"id": 1, "kind": "kernel", "deps": [0], "duration_us": "fast"},
      {"id": 1, "kind": "kernel", "deps": [0]},
      {"id": 3, "kind": "kernel", "deps": [7]},
      {"id": 4, "deps": [3]},
      {"id": 5, "kind": "kernel", "deps": [6]},
      {"id": 6, "kind": "kernel", "deps": []}
    ]
  })");
  ASSERT_FALSE(r.trace);
  EXPECT_EQ(r.diagnostics.items.size(), 5u) << dump(r.diagnostics);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "must be a number of microseconds", 1, "duration_us"), nullptr);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "already used by the task at index 1", 1, "id"), nullptr);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "task 7, which does not exist", 3, "deps[0]"), nullptr);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "missing \"kind\"", 4, "kind"), nullptr);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "comes later", 5, "deps[0]"), nullptr);
}

TEST(Structure, TaskWithUnusableIdStillLetsTheRestBeChecked) {
  const auto r = parse_trace(trace_text(R"({"id": "x", "kind": "k", "deps": []},
                                           {"id": 1, "kind": "k", "deps": [1]})"));
  ASSERT_FALSE(r.trace);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "must be an integer", std::nullopt, "id"), nullptr);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "depends on itself", 1, "deps[0]"), nullptr) << dump(r.diagnostics);
}

}  // namespace
}  // namespace nimble::trace::testing
