// validate_schedule: schedule sections, and that the schedule keeps every dependency.
#include <gtest/gtest.h>

#include <algorithm>
#include <queue>
#include <random>
#include <map>
#include <set>

#include "nimble/trace/validate.hpp"
#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

Diagnostics check(const Trace& trace) {
  Diagnostics d;
  validate_schedule(trace, d);
  return d;
}

const Diagnostic* broken_dependency(const Diagnostics& d, TaskId task, TaskId dep) {
  return find(d, Severity::Error, "depends on task " + std::to_string(dep) + " (stream", task, "schedule");
}

// 0 and 1 are independent; 2 needs both; 3 needs 2.
Trace diamond() { return trace_with_deps({{}, {}, {0, 1}, {2}}); }

TEST(Schedule, UnscheduledTraceIsNotChecked) {
  EXPECT_TRUE(check(diamond()).items.empty());
}

TEST(Schedule, GoodScheduleIsAccepted) {
  Trace t = diamond();
  schedule(t, {0, 1, 0, 0}, {{}, {}, {1}, {}}, 2);
  const Diagnostics d = check(t);
  EXPECT_TRUE(d.items.empty()) << dump(d);
}

TEST(Schedule, MissingWaitIsRejectedNamingTaskAndDependency) {
  Trace t = diamond();
  schedule(t, {0, 1, 0, 0}, {{}, {}, {}, {}}, 2);
  const Diagnostics d = check(t);
  ASSERT_EQ(d.error_count(), 1u) << dump(d);
  const Diagnostic* e = broken_dependency(d, 2, 1);
  ASSERT_NE(e, nullptr) << dump(d);
  EXPECT_EQ(e->where, "task 2 (index 2), field \"schedule\"");
  EXPECT_NE(e->message.find("add 1 to \"schedule.waits\" or move the task to stream 1"), std::string::npos) << e->message;
}

TEST(Schedule, TransitiveOrderIsEnough) {
  // 0 on stream 0; 1 on stream 1 waits for 0; 2 on stream 2 waits for 1 and depends on 0.
  Trace t = trace_with_deps({{}, {0}, {0, 1}});
  schedule(t, {0, 1, 2}, {{}, {0}, {1}}, 3);
  EXPECT_TRUE(check(t).items.empty()) << dump(check(t));
}

TEST(Schedule, WaitOnALaterTaskOfTheDependencysStreamIsEnough) {
  // 0, 1 on stream 0; 2 on stream 1 depends on 0 and waits for 1 (which runs after 0).
  Trace t = trace_with_deps({{}, {}, {0}});
  schedule(t, {0, 0, 1}, {{}, {}, {1}}, 2);
  EXPECT_TRUE(check(t).items.empty()) << dump(check(t));
}

TEST(Schedule, OrderThroughTheStreamPredecessorsWaitIsEnough) {
  // 2 on stream 1 waits for 0; 3 follows 2 on stream 1 and depends on 0 without a wait.
  Trace t = trace_with_deps({{}, {}, {0}, {0}});
  schedule(t, {0, 0, 1, 1}, {{}, {}, {0}, {}}, 2);
  EXPECT_TRUE(check(t).items.empty()) << dump(check(t));
}

TEST(Schedule, WaitOnAnEarlierTaskOfTheDependencysStreamIsNotEnough) {
  // 0, 1 on stream 0; 2 on stream 1 depends on 1 but waits only for 0.
  Trace t = trace_with_deps({{}, {}, {1}});
  schedule(t, {0, 0, 1}, {{}, {}, {0}}, 2);
  const Diagnostics d = check(t);
  EXPECT_NE(broken_dependency(d, 2, 1), nullptr) << dump(d);
}

TEST(Schedule, StreamRange) {
  Trace t = diamond();
  schedule(t, {0, -1, 2, 0}, {{}, {}, {1}, {}}, 2);
  const Diagnostics d = check(t);
  EXPECT_NE(find(d, Severity::Error, "streams are numbered from 0", 1, "schedule.stream"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "the schedule has 2 streams (0 to 1)", 2, "schedule.stream"), nullptr) << dump(d);
}

TEST(Schedule, BadWaits) {
  Trace t = trace_with_deps({{}, {}, {}, {}});
  schedule(t, {0, 1, 0, 1}, {{}, {9, 1, 3}, {0}, {1, 2, 2}}, 2);
  const Diagnostics d = check(t);
  EXPECT_NE(find(d, Severity::Error, "waits for task 9, which does not exist", 1, "schedule.waits[0]"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "waits for itself", 1, "schedule.waits[1]"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "waits for task 3, which comes later", 1, "schedule.waits[2]"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "same stream (0)", 2, "schedule.waits[0]"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "same stream (1)", 3, "schedule.waits[0]"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "more than once", 3, "schedule.waits[2]"), nullptr) << dump(d);
  EXPECT_EQ(d.error_count(), 3u) << dump(d);
}

TEST(Schedule, SyncsMustCountTheWaits) {
  Trace t = diamond();
  schedule(t, {0, 1, 0, 0}, {{}, {}, {1}, {}}, 2);
  t.schedule->syncs = 4;
  const Diagnostics d = check(t);
  ASSERT_EQ(d.items.size(), 1u) << dump(d);
  EXPECT_EQ(d.items[0].severity, Severity::Warning);
  EXPECT_EQ(d.items[0].field, "schedule.syncs");
  EXPECT_NE(d.items[0].message.find("set it to 1"), std::string::npos) << d.items[0].message;
}

TEST(Schedule, EveryTaskNeedsASchedule) {
  Trace t = diamond();
  schedule(t, {0, 1, 0, 0}, {{}, {}, {1}, {}}, 2);
  t.tasks[3].schedule.reset();
  const Diagnostics d = check(t);
  EXPECT_NE(find(d, Severity::Error, "missing \"schedule\" while other tasks have one", 3, "schedule"), nullptr) << dump(d);
}

TEST(Schedule, TopLevelAndTaskSchedulesGoTogether) {
  Trace t = diamond();
  schedule(t, {0, 1, 0, 0}, {{}, {}, {1}, {}}, 2);
  t.schedule.reset();
  Diagnostics d = check(t);
  EXPECT_NE(find(d, Severity::Error, "4 task(s) have a \"schedule\" but the top level has none", std::nullopt, "schedule"), nullptr)
      << dump(d);

  Trace u = diamond();
  u.schedule = TraceSchedule{"nimble", 0, -1, json::object()};
  d = check(u);
  EXPECT_NE(find(d, Severity::Error, "no task has one", std::nullopt, "schedule"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "at least 1 stream", std::nullopt, "schedule.streams"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "cannot be negative", std::nullopt, "schedule.syncs"), nullptr) << dump(d);
}

TEST(Schedule, ProblemsElsewhereDoNotCascade) {
  // A dependency on an unknown or later task is validate_tasks' to report, not a broken schedule.
  Trace t = trace_with_deps({{}, {7}, {3}, {}});
  schedule(t, {0, 1, 0, 1}, {{}, {}, {}, {}}, 2);
  EXPECT_TRUE(check(t).items.empty()) << dump(check(t));
}

TEST(Schedule, LongStreamsUseWideClocks) {
  // More than 32,767 tasks on one stream: clock entries no longer fit 16 bits.
  const int n = 40000;
  std::vector<std::vector<TaskId>> deps(n);
  for (int i = 1; i < n; ++i) deps[i] = {i - 1};
  deps.push_back({});              // 40000, stream 1, waits for 39999
  deps.push_back({39990});         // 40001, stream 1: ordered through 40000's wait
  deps.push_back({39995});         // 40002, stream 2, waits for 39000 only: broken
  Trace t = trace_with_deps(deps);
  std::vector<int> streams(n, 0);
  streams.insert(streams.end(), {1, 1, 2});
  std::vector<std::vector<TaskId>> waits(n);
  waits.insert(waits.end(), {{39999}, {}, {39000}});
  schedule(t, streams, waits, 3);
  const Diagnostics d = check(t);
  ASSERT_EQ(d.error_count(), 1u) << dump(d);
  EXPECT_NE(broken_dependency(d, 40002, 39995), nullptr) << dump(d);
}

// Reference answer: breadth-first search backwards through stream order and valid waits.
std::set<std::pair<TaskId, TaskId>> unordered_by_search(const Trace& t) {
  const std::size_t n = t.tasks.size();
  std::map<TaskId, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index.emplace(t.tasks[i].id, i);
  std::vector<std::vector<std::size_t>> preds(n);
  std::map<int, std::size_t> last_on_stream;
  for (std::size_t i = 0; i < n; ++i) {
    const int s = t.tasks[i].schedule->stream;
    if (last_on_stream.count(s)) preds[i].push_back(last_on_stream[s]);
    last_on_stream[s] = i;
    for (const TaskId w : t.tasks[i].schedule->waits) {
      if (index.count(w) && index[w] < i) preds[i].push_back(index[w]);
    }
  }
  std::set<std::pair<TaskId, TaskId>> unordered;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<bool> seen(n, false);
    std::queue<std::size_t> queue;
    for (const auto p : preds[i]) queue.push(p);
    while (!queue.empty()) {
      const auto v = queue.front();
      queue.pop();
      if (seen[v]) continue;
      seen[v] = true;
      for (const auto p : preds[v]) queue.push(p);
    }
    for (const TaskId dep : t.tasks[i].deps) {
      if (index.count(dep) && index[dep] < i && !seen[index[dep]]) unordered.insert({t.tasks[i].id, dep});
    }
  }
  return unordered;
}

TEST(Schedule, AgreesWithSearchOnRandomSchedules) {
  std::mt19937 rng(2020);
  for (int round = 0; round < 400; ++round) {
    const int n = 1 + static_cast<int>(rng() % 40);
    const int streams = 1 + static_cast<int>(rng() % 5);
    const double dep_p = (rng() % 100) / 250.0, wait_p = (rng() % 100) / 400.0;
    std::uniform_real_distribution<double> coin(0, 1);
    Trace t;
    std::vector<TaskId> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = round % 2 ? i : 1000 - 7 * i;  // also non-contiguous, descending ids
    for (int i = 0; i < n; ++i) {
      Task task;
      task.id = ids[i];
      task.kind = "k";
      TaskSchedule s;
      s.stream = static_cast<int>(rng() % streams);
      for (int j = 0; j < i; ++j) {
        if (coin(rng) < dep_p) task.deps.push_back(ids[j]);
        if (coin(rng) < wait_p) s.waits.push_back(ids[j]);
      }
      task.schedule = s;
      t.tasks.push_back(task);
    }
    t.schedule = TraceSchedule{"random", streams, 0, json::object()};
    const auto expected = unordered_by_search(t);
    const Diagnostics d = check(t);
    std::size_t broken = 0;
    for (const auto& item : d.items) broken += item.field == "schedule" && item.severity == Severity::Error;
    ASSERT_EQ(broken, expected.size()) << "round " << round << "\n" << dump(d);
    for (const auto& [task, dep] : expected) {
      ASSERT_NE(broken_dependency(d, task, dep), nullptr) << "round " << round << ": task " << task << " dep " << dep;
    }
  }
}

// 100,000 tasks, about 300,000 dependencies, 2,000 streams. Each task waits for the task issued
// just before it when that one is on another stream, so every dependency is ordered, mostly
// only transitively: the expensive case for the check.
Trace large_schedule() {
  const int n = 100000, streams = 2000;
  std::mt19937_64 rng(7);
  Trace t;
  t.tasks.resize(n);
  for (int i = 0; i < n; ++i) {
    Task& task = t.tasks[i];
    task.id = i;
    task.kind = "kernel";
    for (int k = 0; k < 3 && i > 0; ++k) {
      const TaskId dep = static_cast<TaskId>(rng() % i);
      if (std::find(task.deps.begin(), task.deps.end(), dep) == task.deps.end()) task.deps.push_back(dep);
    }
    TaskSchedule s;
    s.stream = static_cast<int>(rng() % streams);
    if (i > 0 && t.tasks[i - 1].schedule->stream != s.stream) s.waits.push_back(i - 1);
    task.schedule = s;
  }
  int syncs = 0;
  for (const auto& task : t.tasks) syncs += static_cast<int>(task.schedule->waits.size());
  t.schedule = TraceSchedule{"chain", streams, syncs, json::object()};
  return t;
}

TEST(Schedule, LargeScheduleIsCheckedFastInBoundedMemory) {
  Trace t = large_schedule();
  std::size_t deps = 0;
  for (const auto& task : t.tasks) deps += task.deps.size();
  ASSERT_GT(deps, 290000u);
  const bool measured = reset_peak_memory();
  const double before_mib = peak_memory_mib();
  const double start = cpu_seconds();
  Diagnostics d = check(t);
  const double seconds = cpu_seconds() - start;
  EXPECT_TRUE(d.items.empty()) << dump(d);
  EXPECT_LT(seconds, fast_budget_seconds() / 2) << "well under a second";
  if (measured) {
    EXPECT_LT(peak_memory_mib() - before_mib, 150.0) << "no dense tasks x streams table";
  }

  // Drop every wait: now most dependencies are broken; still fast, counted past the cap.
  for (auto& task : t.tasks) task.schedule->waits.clear();
  t.schedule->syncs = 0;
  const double again = cpu_seconds();
  d = check(t);
  EXPECT_LT(cpu_seconds() - again, fast_budget_seconds() / 2);
  EXPECT_GT(d.error_count(), 250000u);
  EXPECT_EQ(d.items.size(), d.max_items);
}

}  // namespace
}  // namespace nimble::trace::testing
