#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "export_test_support.hpp"
#include "nimble/export/perfetto.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/validate.hpp"

namespace nimble::exporter {
namespace {

using export_test::load_example;
using export_test::make_task;
using json = nlohmann::json;

constexpr double kEps = 1e-6;  // microseconds; timestamps are whole nanoseconds

struct SliceInfo {
  int tid = 0;
  double ts = 0;
  double dur = 0;
  json event;
};

// The parsed document, indexed: slices of each process by task id, lane names by tid.
struct Parsed {
  json doc;
  std::map<int, std::map<trace::TaskId, std::vector<SliceInfo>>> slices;  // pid -> id -> slices
  std::map<int, std::map<int, std::string>> lanes;                        // pid -> tid -> name
  std::map<int, std::string> process_names;
  std::vector<json> flows;
};

Parsed parse(const std::string& text) {
  Parsed p;
  p.doc = json::parse(text);  // throws (and fails the test) on invalid JSON
  for (const json& e : p.doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const int pid = e.at("pid");
    if (ph == "X") {
      p.slices[pid][e.at("args").at("id").get<trace::TaskId>()].push_back(
          {e.at("tid").get<int>(), e.at("ts").get<double>(), e.at("dur").get<double>(), e});
    } else if (ph == "M" && e.at("name") == "thread_name") {
      p.lanes[pid][e.at("tid").get<int>()] = e.at("args").at("name");
    } else if (ph == "M" && e.at("name") == "process_name") {
      p.process_names[pid] = e.at("args").at("name");
    } else if (ph == "s" || ph == "f") {
      p.flows.push_back(e);
    }
  }
  return p;
}

const SliceInfo& only(const Parsed& p, int pid, trace::TaskId id) {
  const auto& by_id = p.slices.at(pid);
  const auto it = by_id.find(id);
  EXPECT_NE(it, by_id.end()) << "task " << id << " missing in pid " << pid;
  EXPECT_EQ(it->second.size(), 1u) << "task " << id << " in pid " << pid;
  return it->second.front();
}

double duration_or_default(const trace::Task& task) { return task.duration_us.value_or(1.0); }

// Every property the export promises, checked against the trace it came from.
void check_export(const trace::Trace& trace, const PerfettoExport& result, const Parsed& p) {
  ASSERT_TRUE(p.doc.contains("traceEvents"));
  ASSERT_TRUE(p.doc["traceEvents"].is_array());
  const std::size_t n = trace.tasks.size();
  std::map<trace::TaskId, std::size_t> index_of;
  for (std::size_t i = 0; i < n; ++i) index_of[trace.tasks[i].id] = i;

  for (int pid : {kRecordedPid, kPlanPid}) {
    // Each task exactly once per process, nothing else.
    ASSERT_EQ(p.slices.count(pid), n > 0 ? 1u : 0u);
    if (n == 0) continue;
    EXPECT_EQ(p.slices.at(pid).size(), n) << "pid " << pid;
    for (const auto& task : trace.tasks) {
      const SliceInfo& s = only(p, pid, task.id);
      EXPECT_NEAR(s.dur, duration_or_default(task), kEps) << "task " << task.id;
      EXPECT_EQ(s.event["args"]["kind"], task.kind);
      EXPECT_EQ(s.event["args"]["deps"].get<std::vector<trace::TaskId>>(), task.deps);
      EXPECT_TRUE(p.lanes.at(pid).count(s.tid)) << "slice on an unnamed lane, task " << task.id;
    }
    EXPECT_TRUE(p.process_names.count(pid));
  }
  // Thread ids are not shared between the processes (Perfetto names threads by tid alone).
  for (const auto& [tid, name] : p.lanes.at(kRecordedPid)) EXPECT_FALSE(p.lanes.at(kPlanPid).count(tid)) << tid;

  // Recorded lanes are the program streams.
  std::set<std::string> expected_recorded;
  for (const auto& task : trace.tasks) {
    const SliceInfo& s = only(p, kRecordedPid, task.id);
    const std::string& lane = p.lanes.at(kRecordedPid).at(s.tid);
    if (task.stream) {
      const std::string prefix = "stream " + std::to_string(*task.stream);
      EXPECT_TRUE(lane == prefix || lane.rfind(prefix + " (", 0) == 0) << lane << " for task " << task.id;
    } else {
      EXPECT_EQ(lane.rfind("stream ", 0), std::string::npos) << lane;
    }
    if (auto start = task.extra.find("start_us"); start != task.extra.end() && start->is_number()) {
      EXPECT_NEAR(s.ts, start->get<double>(), kEps) << "task " << task.id;
    }
    expected_recorded.insert(lane);
  }
  EXPECT_EQ(p.lanes.at(kRecordedPid).size(), expected_recorded.size());
  EXPECT_EQ(result.recorded_lanes, expected_recorded.size());

  // Plan lanes are the schedule's streams; each task on the lane of its stream.
  const ScheduleView& plan = result.plan;
  EXPECT_EQ(p.lanes.at(kPlanPid).size(), plan.streams);
  std::map<std::uint32_t, int> tid_of_stream;
  for (std::size_t i = 0; i < n; ++i) {
    const SliceInfo& s = only(p, kPlanPid, trace.tasks[i].id);
    const std::string& lane = p.lanes.at(kPlanPid).at(s.tid);
    const std::string prefix = "stream " + std::to_string(plan.stream_of[i]);
    EXPECT_TRUE(lane == prefix || lane.rfind(prefix + " (priority ", 0) == 0) << lane;
    EXPECT_EQ(s.event["args"]["stream"].get<std::uint32_t>(), plan.stream_of[i]);
    auto [it, inserted] = tid_of_stream.emplace(plan.stream_of[i], s.tid);
    EXPECT_EQ(it->second, s.tid) << "stream " << plan.stream_of[i] << " on two lanes";
    if (!plan.computed && trace.tasks[i].schedule) {
      EXPECT_EQ(static_cast<int>(plan.stream_of[i]), trace.tasks[i].schedule->stream);
    }
  }

  // The simulated timeline respects every dependency, every wait and stream order.
  double makespan = 0;
  std::map<int, double> lane_end;
  for (std::size_t i = 0; i < n; ++i) {
    const trace::Task& task = trace.tasks[i];
    const SliceInfo& s = only(p, kPlanPid, task.id);
    for (trace::TaskId dep : task.deps) {
      const SliceInfo& d = only(p, kPlanPid, dep);
      EXPECT_GE(s.ts + kEps, d.ts + d.dur) << "task " << task.id << " starts before dependency " << dep << " ends";
    }
    for (std::size_t u : plan.waits[i]) {
      const SliceInfo& w = only(p, kPlanPid, trace.tasks[u].id);
      EXPECT_GE(s.ts + kEps, w.ts + w.dur);
    }
    EXPECT_GE(s.ts + kEps, lane_end[s.tid]) << "task " << task.id << " overlaps the one before it on its stream";
    lane_end[s.tid] = s.ts + s.dur;
    makespan = std::max(makespan, s.ts + s.dur);
  }
  EXPECT_NEAR(makespan, result.plan_makespan_us, kEps);

  // Flow events pair up: one "s" and one "f" per id, one pair per wait, bound inside the slices.
  std::map<std::int64_t, std::vector<json>> by_id;
  for (const json& f : p.flows) by_id[f.at("id").get<std::int64_t>()].push_back(f);
  EXPECT_EQ(by_id.size(), plan.syncs);
  EXPECT_EQ(result.flows, plan.syncs);
  std::multiset<std::pair<trace::TaskId, trace::TaskId>> flow_pairs, wait_pairs;
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t u : plan.waits[v]) wait_pairs.emplace(trace.tasks[u].id, trace.tasks[v].id);
  }
  for (const auto& [id, pair] : by_id) {
    ASSERT_EQ(pair.size(), 2u) << "flow " << id;
    const json& s = pair[0].at("ph") == "s" ? pair[0] : pair[1];
    const json& f = pair[0].at("ph") == "s" ? pair[1] : pair[0];
    ASSERT_EQ(s.at("ph"), "s");
    ASSERT_EQ(f.at("ph"), "f");
    EXPECT_EQ(f.at("bp"), "e");
    EXPECT_EQ(s.at("name"), f.at("name"));
    EXPECT_EQ(s.at("cat"), f.at("cat"));
    EXPECT_EQ(s.at("pid"), kPlanPid);
    EXPECT_EQ(f.at("pid"), kPlanPid);
    const trace::TaskId from = s.at("args").at("from"), to = f.at("args").at("to");
    flow_pairs.emplace(from, to);
    const SliceInfo& a = only(p, kPlanPid, from);
    const SliceInfo& b = only(p, kPlanPid, to);
    EXPECT_EQ(s.at("tid"), a.tid);
    EXPECT_EQ(f.at("tid"), b.tid);
    EXPECT_GE(s.at("ts").get<double>() + kEps, a.ts);
    EXPECT_LE(s.at("ts").get<double>(), a.ts + a.dur + kEps);
    EXPECT_GE(f.at("ts").get<double>() + kEps, b.ts);
    EXPECT_LE(f.at("ts").get<double>(), b.ts + b.dur + kEps);
  }
  EXPECT_EQ(flow_pairs, wait_pairs);
}

PerfettoExport export_and_check(const trace::Trace& trace, const PerfettoOptions& options = {}) {
  PerfettoExport result = export_perfetto(trace, options);
  const Parsed p = parse(result.text);
  check_export(trace, result, p);
  return result;
}

TEST(Perfetto, TinyUnscheduledIsScheduledHere) {
  const trace::Trace trace = load_example("tiny.json");
  const PerfettoExport result = export_and_check(trace);
  EXPECT_TRUE(result.plan.computed);
  const Parsed p = parse(result.text);
  EXPECT_NE(p.process_names.at(kPlanPid).find("computed by nimble export"), std::string::npos);
  EXPECT_EQ(p.doc["otherData"]["plan"]["source"], "computed");
  EXPECT_NE(p.doc["otherData"]["plan"]["description"].get<std::string>().find("the trace has no schedule"),
            std::string::npos);
  // Recorded lanes: the three program streams with their kind and priority.
  std::set<std::string> lanes;
  for (const auto& [tid, name] : p.lanes.at(kRecordedPid)) lanes.insert(name);
  EXPECT_EQ(lanes, (std::set<std::string>{"stream 0 (legacy, priority 0, 0x1)",
                                          "stream 1 (created, priority 0, 0x55d1c40a1e30)",
                                          "stream 2 (created, priority 0, 0x55d1c40a21e0)"}));
  EXPECT_EQ(result.recorded_with_start, trace.tasks.size());
  EXPECT_NE(p.process_names.at(kRecordedPid).find("recorded GPU start times"), std::string::npos);
  // Names: kernels by name, copies by kind and direction.
  EXPECT_EQ(only(p, kRecordedPid, 3).event["name"], "scale_kernel");
  EXPECT_EQ(only(p, kRecordedPid, 0).event["name"], "memcpy HtoD #0");
  EXPECT_EQ(only(p, kRecordedPid, 3).event["args"]["name"], "scale_kernel(float*, float, int)");
  EXPECT_EQ(only(p, kRecordedPid, 3).event["args"]["grid"], json::array({4096, 1, 1}));
  EXPECT_EQ(only(p, kRecordedPid, 3).event["args"]["api"], "cuLaunchKernel");
}

TEST(Perfetto, PlanMakespanEqualsTheSchedulersEstimate) {
  for (const char* name : {"tiny.json", "inception_block.json"}) {
    trace::Trace trace = load_example(name);
    const PerfettoExport result = export_and_check(trace);
    const scheduler::Stats stats = scheduler::schedule_trace(trace);
    EXPECT_NEAR(result.plan_makespan_us, stats.makespan_us, 1e-3) << name;
    EXPECT_EQ(result.plan.streams, stats.streams) << name;
    EXPECT_EQ(result.plan.syncs, stats.waits) << name;
  }
}

TEST(Perfetto, StoredScheduleIsShownAsIs) {
  const trace::Trace trace = load_example("tiny_scheduled.json");
  const PerfettoExport result = export_and_check(trace);
  EXPECT_FALSE(result.plan.computed);
  EXPECT_EQ(result.plan.streams, 3u);
  EXPECT_EQ(result.flows, 2u);  // task 4 waits for 1 and 2
  const Parsed p = parse(result.text);
  EXPECT_EQ(p.doc["otherData"]["plan"]["source"], "stored");
  EXPECT_EQ(p.process_names.at(kPlanPid).find("computed"), std::string::npos);
  // Times: 0 HtoD 168.4 on stream 0, then 3 (6.1) and 4 after 1 (168.1) and 2; 4 starts at 174.5.
  EXPECT_NEAR(only(p, kPlanPid, 3).ts, 168.4, kEps);
  EXPECT_NEAR(only(p, kPlanPid, 4).ts, 174.5, kEps);
  EXPECT_NEAR(only(p, kPlanPid, 5).ts, 183.2, kEps);
}

TEST(Perfetto, StreamPrioritiesNameTheLanes) {
  trace::Trace trace = load_example("tiny_scheduled.json");
  trace.schedule->extra["stream_priorities"] = {0, 1, 0};
  const Parsed p = parse(export_and_check(trace).text);
  std::set<std::string> lanes;
  for (const auto& [tid, name] : p.lanes.at(kPlanPid)) lanes.insert(name);
  EXPECT_EQ(lanes, (std::set<std::string>{"stream 0 (priority 0)", "stream 1 (priority 1)", "stream 2 (priority 0)"}));
}

TEST(Perfetto, InceptionBlockLibraryCallsAndCategories) {
  const trace::Trace trace = load_example("inception_block.json");
  const PerfettoExport result = export_and_check(trace);
  const Parsed p = parse(result.text);
  EXPECT_EQ(p.lanes.at(kRecordedPid).size(), 4u);
  const SliceInfo& conv = only(p, kRecordedPid, 1);
  EXPECT_EQ(conv.event["cat"], "kernel,cudnnBackendExecute");
  EXPECT_EQ(conv.event["args"]["library_call"], "cudnnBackendExecute");
  const SliceInfo& relu = only(p, kRecordedPid, 3);
  EXPECT_EQ(relu.event["cat"], "kernel");
  EXPECT_FALSE(relu.event["args"].contains("library_call"));  // null in the trace
  EXPECT_EQ(relu.event["name"], "vectorized_elementwise_kernel<...>");
  for (const auto& [id, slices] : p.slices.at(kRecordedPid)) {
    EXPECT_LE(slices.front().event["name"].get<std::string>().size(), 64u);
  }
}

TEST(Perfetto, MaxStreamsLimitsAComputedPlan) {
  const trace::Trace trace = load_example("inception_block.json");
  PerfettoOptions options;
  options.plan.max_streams = 2;
  const PerfettoExport two = export_and_check(trace, options);
  EXPECT_EQ(two.plan.streams, 2u);
  options.plan.max_streams = 1;
  const PerfettoExport one = export_and_check(trace, options);
  EXPECT_EQ(one.plan.streams, 1u);
  EXPECT_EQ(one.flows, 0u);
  const Parsed p = parse(one.text);
  EXPECT_EQ(p.doc["otherData"]["plan"]["max_streams"], 1);
  // One stream: the plan is the serial sum of durations.
  double serial = 0;
  for (const auto& task : trace.tasks) serial += *task.duration_us;
  EXPECT_NEAR(one.plan_makespan_us, serial, 1e-3);
}

TEST(Perfetto, RescheduleIgnoresTheStoredSchedule) {
  const trace::Trace trace = load_example("tiny_scheduled.json");
  PerfettoOptions options;
  options.plan.reschedule = true;
  options.plan.max_streams = 1;
  const PerfettoExport result = export_and_check(trace, options);
  EXPECT_TRUE(result.plan.computed);
  EXPECT_EQ(result.plan.streams, 1u);
  EXPECT_NE(result.plan.description.find("--reschedule"), std::string::npos);
}

TEST(Perfetto, WithoutTimesTasksRunBackToBackInIssueOrder) {
  trace::Trace trace;
  trace.tasks = {make_task(5, {}, 2.5, 0), make_task(6, {}, std::nullopt, 1), make_task(7, {5, 6}, 4.0, 0),
                 make_task(8, {7}, 0.25, std::nullopt, "sync")};
  ASSERT_FALSE(trace::validate_trace(trace).has_errors()) << trace::validate_trace(trace).format("synthetic");
  const PerfettoExport result = export_and_check(trace);
  EXPECT_EQ(result.tasks_without_duration, 1u);
  EXPECT_EQ(result.recorded_with_start, 0u);
  const Parsed p = parse(result.text);
  EXPECT_NEAR(only(p, kRecordedPid, 5).ts, 0, kEps);
  EXPECT_NEAR(only(p, kRecordedPid, 6).ts, 2.5, kEps);
  EXPECT_NEAR(only(p, kRecordedPid, 6).dur, 1.0, kEps);  // unknown: 1 us
  EXPECT_NEAR(only(p, kRecordedPid, 7).ts, 3.5, kEps);
  EXPECT_NEAR(only(p, kRecordedPid, 8).ts, 7.5, kEps);
  EXPECT_EQ(p.lanes.at(kRecordedPid).at(only(p, kRecordedPid, 8).tid), "no stream (host synchronisations)");
  EXPECT_NE(p.process_names.at(kRecordedPid).find("back to back in issue order"), std::string::npos);
  EXPECT_NE(p.process_names.at(kRecordedPid).find("1 task of unknown duration drawn 1 us"), std::string::npos);
  EXPECT_NE(p.process_names.at(kPlanPid).find("1 task of unknown duration drawn 1 us"), std::string::npos);
  EXPECT_EQ(p.doc["otherData"]["tasks_without_duration"], 1);
  EXPECT_EQ(p.doc["otherData"]["default_duration_us"], 1.0);
  EXPECT_EQ(only(p, kRecordedPid, 6).event["args"]["duration_us"], "unknown (drawn 1 us)");
}

TEST(Perfetto, MixedStartTimesAndNoStreamsAtAll) {
  trace::Trace trace;
  trace.tasks = {make_task(0, {}, 1.0), make_task(1, {0}, 2.0), make_task(2, {1}, 3.0)};
  trace.tasks[0].extra["start_us"] = 10.0;
  trace.tasks[2].extra["start_us"] = 20.0;
  const PerfettoExport result = export_and_check(trace);
  const Parsed p = parse(result.text);
  EXPECT_EQ(p.lanes.at(kRecordedPid).size(), 1u);
  EXPECT_EQ(p.lanes.at(kRecordedPid).begin()->second, "all tasks (the trace records no streams)");
  EXPECT_NEAR(only(p, kRecordedPid, 1).ts, 11.0, kEps);  // right after task 0
  EXPECT_NEAR(only(p, kRecordedPid, 2).ts, 20.0, kEps);
  EXPECT_EQ(result.recorded_with_start, 2u);
  EXPECT_NE(p.process_names.at(kRecordedPid).find("recorded start times for 2 of 3 tasks"), std::string::npos);
}

TEST(Perfetto, WideSyntheticTraceWithManyWaits) {
  // Fork-join ladders: every layer of 6 tasks depends on two tasks of the layer before.
  trace::Trace trace;
  trace::TaskId next = 100;
  std::vector<trace::TaskId> previous;
  for (int layer = 0; layer < 12; ++layer) {
    std::vector<trace::TaskId> current;
    for (int k = 0; k < 6; ++k) {
      std::vector<trace::TaskId> deps;
      if (!previous.empty()) {
        deps.push_back(previous[k]);
        deps.push_back(previous[(k + layer + 1) % 6]);
        if (deps[0] == deps[1]) deps.pop_back();
      }
      trace.tasks.push_back(make_task(next, deps, 1.0 + (next * 7 % 5) * 0.333, k % 3));
      current.push_back(next++);
    }
    previous = current;
  }
  ASSERT_FALSE(trace::validate_trace(trace).has_errors());
  const PerfettoExport result = export_and_check(trace);
  EXPECT_GT(result.flows, 0u);
  // The same plan stored in the trace gives the same timeline.
  trace::Trace scheduled = trace;
  scheduler::schedule_trace(scheduled);
  const PerfettoExport stored = export_and_check(scheduled);
  EXPECT_NEAR(stored.plan_makespan_us, result.plan_makespan_us, kEps);
}

TEST(Perfetto, OutputIsDeterministicAndOneEventPerLine) {
  const trace::Trace trace = load_example("inception_block.json");
  const std::string a = export_perfetto(trace).text;
  const std::string b = export_perfetto(trace).text;
  EXPECT_EQ(a, b);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.back(), '\n');
  EXPECT_EQ(a.rfind("{\"traceEvents\": [\n", 0), 0u);
  const json doc = json::parse(a);
  const std::size_t lines = static_cast<std::size_t>(std::count(a.begin(), a.end(), '\n'));
  EXPECT_EQ(lines, doc["traceEvents"].size() + 3);  // header, events, "]," line with otherData, no more
}

TEST(Perfetto, EmptyTrace) {
  trace::Trace trace;
  const PerfettoExport result = export_perfetto(trace);
  const json doc = json::parse(result.text);
  EXPECT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(result.plan.streams, 0u);
}

TEST(Perfetto, NamesWithQuotesAndNewlinesStayValidJson) {
  trace::Trace trace;
  trace.tasks = {make_task(0, {}, 1.0, 0)};
  trace.tasks[0].extra["name"] = "void k<\"x\">(char const*\n, \\n)";
  const PerfettoExport result = export_and_check(trace);
  const Parsed p = parse(result.text);
  EXPECT_EQ(only(p, kRecordedPid, 0).event["args"]["name"], "void k<\"x\">(char const*\n, \\n)");
}

TEST(Perfetto, InconsistentScheduleIsRejectedNotCrashed) {
  trace::Trace trace = load_example("tiny_scheduled.json");
  trace.tasks[4].schedule->waits = {99};
  EXPECT_THROW(export_perfetto(trace), std::invalid_argument);
  trace = load_example("tiny_scheduled.json");
  trace.tasks[1].schedule->stream = 7;
  EXPECT_THROW(export_perfetto(trace), std::invalid_argument);
}

}  // namespace
}  // namespace nimble::exporter
