#include <gtest/gtest.h>

#include "nimble/scheduler/trace_schedule.hpp"

namespace nimble::scheduler {
namespace {

trace::Task task(trace::TaskId id, std::vector<trace::TaskId> deps, std::optional<double> duration = std::nullopt) {
  trace::Task t;
  t.id = id;
  t.kind = "kernel";
  t.deps = std::move(deps);
  t.duration_us = duration;
  return t;
}

// Fork-join with ids that are neither contiguous nor ascending: 30 -> {10, 20} -> 40.
trace::Trace fork_join_trace() {
  trace::Trace t;
  t.tasks = {task(30, {}, 10.0), task(10, {30}, 5.0), task(20, {30}, 7.0), task(40, {10, 20, 30}, 2.0)};
  return t;
}

TEST(TraceSchedule, FillsTaskAndTopLevelSchedulesWithTaskIds) {
  trace::Trace t = fork_join_trace();
  t.tasks[1].extra["name"] = "relu";
  const Stats stats = schedule_trace(t);
  EXPECT_EQ(stats.tasks, 4u);
  EXPECT_EQ(stats.edges, 5u);
  EXPECT_EQ(stats.meg_edges, 4u);  // 30 -> 40 is implied
  ASSERT_TRUE(t.schedule);
  EXPECT_EQ(t.schedule->algorithm, "nimble");
  EXPECT_EQ(t.schedule->streams, 2);
  EXPECT_EQ(t.schedule->syncs, 2);
  EXPECT_EQ(t.schedule->extra["stream_priorities"].size(), 2u);
  EXPECT_DOUBLE_EQ(t.schedule->extra["makespan_us"]["critical_path"].get<double>(), 19);
  EXPECT_DOUBLE_EQ(t.schedule->extra["makespan_us"]["schedule"].get<double>(), 19);
  EXPECT_DOUBLE_EQ(t.schedule->extra["makespan_us"]["serial"].get<double>(), 24);
  EXPECT_FALSE(t.schedule->extra.contains("tasks_without_duration"));

  // 30 heads stream 0 and is matched to its first successor, 10; 20 runs on stream 1.
  std::vector<int> streams;
  for (const auto& task : t.tasks) {
    ASSERT_TRUE(task.schedule) << task.id;
    streams.push_back(task.schedule->stream);
  }
  EXPECT_EQ(streams, (std::vector<int>{0, 0, 1, 0}));
  EXPECT_EQ(t.tasks[0].schedule->waits, std::vector<trace::TaskId>{});
  EXPECT_EQ(t.tasks[2].schedule->waits, std::vector<trace::TaskId>{30});
  EXPECT_EQ(t.tasks[3].schedule->waits, std::vector<trace::TaskId>{20});
  EXPECT_EQ(t.tasks[1].extra["name"], "relu");  // untouched
}

TEST(TraceSchedule, ReschedulingReplacesTheOldScheduleButKeepsUserFields) {
  trace::Trace t = fork_join_trace();
  schedule_trace(t);
  t.tasks[2].schedule->extra["note"] = "hand-edited";
  t.schedule->algorithm = "manual";
  schedule_trace(t, {.max_streams = 1});
  EXPECT_EQ(t.schedule->algorithm, "nimble");
  EXPECT_EQ(t.schedule->streams, 1);
  EXPECT_EQ(t.schedule->syncs, 0);
  EXPECT_EQ(t.schedule->extra["max_streams"], 1);
  EXPECT_EQ(t.tasks[2].schedule->stream, 0);
  EXPECT_TRUE(t.tasks[2].schedule->waits.empty());
  EXPECT_EQ(t.tasks[2].schedule->extra["note"], "hand-edited");
}

TEST(TraceSchedule, ReportsMissingDurations) {
  trace::Trace t = fork_join_trace();
  t.tasks[1].duration_us.reset();
  const Stats stats = schedule_trace(t);
  EXPECT_EQ(stats.tasks_without_duration, 1u);
  EXPECT_EQ(t.schedule->extra["tasks_without_duration"], 1);
  EXPECT_EQ(t.schedule->extra["default_duration_us"], kDefaultDurationUs);

  trace::Trace none;
  none.tasks = {task(1, {}), task(2, {1})};
  EXPECT_EQ(schedule_trace(none).tasks_without_duration, 2u);
  EXPECT_TRUE(dag_from_trace(none).durations_us.empty());
}

TEST(TraceSchedule, RejectsUnknownLaterAndDuplicateIdsNamingTheTask) {
  auto message = [](trace::Trace t) {
    try {
      schedule_trace(t);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  trace::Trace unknown;
  unknown.tasks = {task(1, {}), task(2, {7})};
  EXPECT_EQ(message(unknown), "task 2 (index 1), field \"deps\": 7 is not the id of an earlier task");
  trace::Trace later;
  later.tasks = {task(1, {2}), task(2, {})};
  EXPECT_EQ(message(later), "task 1 (index 0), field \"deps\": 2 is not the id of an earlier task");
  trace::Trace self;
  self.tasks = {task(1, {1})};
  EXPECT_EQ(message(self), "task 1 (index 0), field \"deps\": 1 is not the id of an earlier task");
  trace::Trace duplicate;
  duplicate.tasks = {task(1, {}), task(1, {})};
  EXPECT_EQ(message(duplicate), "task 1 (index 1), field \"id\": duplicate id");
  EXPECT_FALSE(unknown.schedule);
}

TEST(TraceSchedule, EmptyTraceGetsAnEmptySchedule) {
  trace::Trace t;
  const Stats stats = schedule_trace(t);
  EXPECT_EQ(stats.tasks, 0u);
  ASSERT_TRUE(t.schedule);
  EXPECT_EQ(t.schedule->streams, 0);
}

TEST(TraceSchedule, StatsToJsonNamesEveryCount) {
  trace::Trace t = fork_join_trace();
  const auto j = stats_to_json(schedule_trace(t));
  EXPECT_EQ(j["meg_edges"], 4);
  EXPECT_EQ(j["chains"], 2);
  EXPECT_EQ(j["waits"], 2);
  EXPECT_TRUE(j["time_ms"].contains("total"));
  EXPECT_EQ(j["width"]["upper_bound"], 2);
}

}  // namespace
}  // namespace nimble::scheduler
