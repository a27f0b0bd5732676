// nimble run's exit summary: counts over every recording, the main recording's details, and the one
// line that says why nothing was replayed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "nimble/replayer/run_report.hpp"
#include "session_util.hpp"

namespace nimble::replayer {
namespace {

using test::call_of;
using test::Log;
using test::recording;
using test::sig;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

RunSession trusted_session() {
  RunOptions o;
  o.trial_block = 0;
  return RunSession(o, [](std::uint64_t) { return false; }, [] { return std::uint64_t{1}; });
}

void issue(RunSession& s, const std::vector<std::uint64_t>& functions) {
  for (std::uint64_t f : functions) test::hand_over(s, sig(f), call_of(f));
}

// A recording's wait: trace built in 11.04 ms, file written meanwhile, plan 10 ms, graphs 20.5 ms.
RecordingWait measured_wait() {
  RecordingWait wait;
  wait.closing.trace_build_ms = 11.04;
  wait.closing.trace_written_in_background = true;
  wait.plan_ms = 10.0;
  wait.graphs_ms = 20.5;
  return wait;
}

// A recording's cost to the program, by part: nimble run's own (file written meanwhile) and the
// synchronous write's, with the parts summing to the total.
TEST(RunReport, TheWaitForARecordingIsToldByPart) {
  RecordingWait wait = measured_wait();
  EXPECT_EQ(wait_text(wait),
            "the program waited 41.5 ms (trace built 11.0, plan 10.0, graphs 20.5; the trace file is written meanwhile)");
  const trace::json json = wait_json(wait);
  EXPECT_DOUBLE_EQ(json["plan"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(json["graphs"].get<double>(), 20.5);
  EXPECT_DOUBLE_EQ(json["total"].get<double>(), 41.54);
  EXPECT_EQ(json["plan_and_graphs_in_background"], false);
  EXPECT_EQ(json["trace_written_in_background"], true);
  wait.closing.trace_write_ms = 3.0;  // an earlier recording's file, still being written
  EXPECT_TRUE(contains(wait_text(wait), "graphs 20.5, an earlier trace file 3.0; the trace file is written meanwhile)"))
      << wait_text(wait);
  wait.closing.trace_written_in_background = false;
  wait.closing.cupti_stop_ms = 1.25;
  EXPECT_EQ(wait_text(wait), "the program waited 45.8 ms (CUPTI 1.2, trace built 11.0 and written 3.0, plan 10.0, graphs 20.5)");
}

// Plan and graphs made on nimble's thread while the program ran on are not part of its wait; when
// the recording was ready is told instead.
TEST(RunReport, PlanAndGraphsMadeInTheBackgroundAreNotWaitedFor) {
  RecordingWait wait = measured_wait();
  wait.in_background = true;
  wait.ready_after_ms = 33.25;
  EXPECT_DOUBLE_EQ(wait.total_ms(), 11.04);
  EXPECT_EQ(wait_text(wait),
            "the program waited 11.0 ms (trace built 11.0; the trace file is written meanwhile); plan (10.0 ms) and "
            "graphs (20.5 ms) were made while it ran on, ready 33.2 ms after the window closed");
  const trace::json json = wait_json(wait);
  EXPECT_DOUBLE_EQ(json["total"].get<double>(), 11.04);
  EXPECT_DOUBLE_EQ(json["graphs"].get<double>(), 20.5);
  EXPECT_EQ(json["plan_and_graphs_in_background"], true);
  EXPECT_DOUBLE_EQ(json["ready_after"].get<double>(), 33.25);
  // Graphs that had to be built again on the program's thread are waited for, and why is told.
  wait.graphs_rebuilt_because = "a kernel's limit";
  wait.graphs_rebuilt_ms = 4.0;
  EXPECT_DOUBLE_EQ(wait.total_ms(), 15.04);
  EXPECT_TRUE(contains(wait_text(wait), "the program waited 15.0 ms (trace built 11.0, graphs built on its thread 4.0 (a "
                                        "kernel's limit); the trace file is written meanwhile)"))
      << wait_text(wait);
  EXPECT_DOUBLE_EQ(wait_json(wait)["graphs_rebuilt"].get<double>(), 4.0);
  // The trace built there too: the program waited for its tasks to be taken.
  wait.graphs_rebuilt_because.clear();
  wait.graphs_rebuilt_ms = 0;
  wait.closing.trace_built_in_background = true;
  wait.closing.trace_build_ms = 0.31;
  wait.background_trace_ms = 12.0;
  EXPECT_EQ(wait_text(wait),
            "the program waited 0.3 ms (trace taken 0.3; the trace file is written meanwhile); trace (12.0 ms), plan (10.0 "
            "ms) and graphs (20.5 ms) were made while it ran on, ready 33.2 ms after the window closed");
  EXPECT_DOUBLE_EQ(wait_json(wait)["background_trace_build"].get<double>(), 12.0);
}

TEST(RunReport, NothingReplayedSaysWhyForEveryRecordingAndRefusal) {
  Log log;
  RunSession s = trusted_session();
  EXPECT_EQ(nothing_replayed_because(s, {}), "no recorded iteration could be replayed");
  s.add(recording("/tmp/a.json", {1, 2}, log));
  const std::string why = nothing_replayed_because(s, {"/tmp/b.json: the iteration launches the program's own CUDA graphs"});
  EXPECT_TRUE(contains(why, "/tmp/b.json: the iteration launches the program's own CUDA graphs")) << why;
  EXPECT_TRUE(contains(why, "/tmp/a.json never matched the program's later calls")) << why;
  // Its first call came again, the next did not: the reason the iteration stopped is what to read.
  issue(s, {1, 3});
  const std::string began = nothing_replayed_because(s, {});
  EXPECT_TRUE(contains(began, "/tmp/a.json began to match the program's calls but no iteration ran to its end as "
                              "recorded; most often: ")) << began;
  EXPECT_TRUE(contains(began, "a different kernel (recorded 0x2, called 0x3)")) << began;
  // Once something was replayed there is nothing to explain.
  issue(s, {1, 2});
  issue(s, {1, 2});
  EXPECT_EQ(nothing_replayed_because(s, {"refused"}), "");
}

// Iterations were replayed, then the one recording kept falling back and was dropped: the summary
// says replay ended and why (a VAE on the H200 replayed 8 of 816 steps, both its recordings dropped
// for moving buffers, and no line said that nothing replayed after them).
TEST(RunReport, ReplayThatEndedWithEveryRecordingDroppedSaysWhy) {
  Log log;
  RunOptions o;
  o.trial_block = 0;
  o.failure_limit = 4;
  RunSession s(o, [](std::uint64_t) { return false; }, [] { return std::uint64_t{1}; });
  s.add(recording("/tmp/a.json", {1, 2, 3}, log));
  for (int i = 0; i < 3; ++i) issue(s, {1, 2, 3});
  EXPECT_EQ(replay_ended_because(s), "");  // live
  for (int i = 0; i < 10 && s.recordings()[0]->state != RecordingState::Dropped; ++i) {
    issue(s, {1, 2});
    s.on_host_visible_point("synchronized a stream");  // in the middle of its iteration: a fall-back
  }
  ASSERT_EQ(s.recordings()[0]->state, RecordingState::Dropped);
  ASSERT_GT(s.iterations_replayed(), 0u);
  const std::string why = replay_ended_because(s);
  EXPECT_TRUE(contains(why, "/tmp/a.json was dropped: kept falling back")) << why;
  s.finish("end");
  const RunReportInput in{s, "/tmp/a.json", {}, {}, {}, {}};
  EXPECT_EQ(run_summary_json(in).value(kReplayEndedBecause, ""), why);
  EXPECT_FALSE(run_summary_json(in).contains(kNothingReplayedBecause));
  EXPECT_TRUE(contains(run_summary_text(in), "nimble run: replay ended after " + std::to_string(s.iterations_replayed()) +
                                                 " iteration(s); the rest ran as the program issued it: /tmp/a.json was dropped: "))
      << run_summary_text(in);
}

TEST(RunReport, TheSummaryAddsUpEveryRecordingAndTheMainOneHeadsIt) {
  Log log;
  RunSession s = trusted_session();
  s.add(recording("/tmp/t.json", {1, 2, 3}, log));
  s.add(recording("/tmp/t.2.json", {5, 6}, log));
  for (int i = 0; i < 4; ++i) issue(s, {1, 2, 3});
  issue(s, {5, 6});
  issue(s, {1, 2});
  s.on_host_visible_point("synchronized a stream");  // in the middle: falls back
  s.finish("end");
  RunReportInput in{s, "/tmp/t.json", {"/tmp/t.3.json: refused"}, {}, {3, 1, 0}, {{2, 90}, {4, 5000, 7'260'000}}};
  in.extras.push_back({{{"ops", 3}}, {{"launches", 4}}});
  in.extras.push_back({{{"ops", 2}}, {{"launches", 1}}});
  const trace::json j = run_summary_json(in);
  EXPECT_EQ(j.value("format", ""), "nimble-run");
  EXPECT_EQ(j.value("iterations_replayed", 0), 5);
  EXPECT_EQ(j.value("calls_deferred", 0), 12 + 2 + 2);
  ASSERT_EQ(j["recordings"].size(), 2u);
  EXPECT_EQ(j["recordings"][1].value("iterations_replayed", 0), 1);
  EXPECT_EQ(j["recordings"][1]["setup"].value("ops", 0), 2);
  ASSERT_EQ(j["fallbacks"].size(), 1u);
  EXPECT_EQ(j["refused"][0], "/tmp/t.3.json: refused");
  EXPECT_EQ(j["setup"].value("ops", 0), 3);  // the recording that replayed most
  EXPECT_EQ(j["graphs"].value("launches", 0), 4);
  EXPECT_FALSE(j.contains("nothing_replayed_because"));
  EXPECT_EQ(j["side_threads"].value("threads", 0), 2);
  EXPECT_EQ(j["side_threads"].value("calls", 0), 90);
  EXPECT_EQ(j["looking"].value("looks", 0), 4);
  EXPECT_EQ(j["looking"].value("calls_looked_at", 0), 5000);
  EXPECT_DOUBLE_EQ(j["looking"].value("host_ms", 0.0), 7.26);

  const std::string text = run_summary_text(in);
  EXPECT_TRUE(contains(text, "nimble run: 90 call(s) of 2 thread(s) that launched no kernel ran as the program's own"))
      << text;
  EXPECT_TRUE(contains(text, "nimble run: recording /tmp/t.json (3 calls): replaying")) << text;
  EXPECT_TRUE(contains(text, "cuBLASLt heuristics: 3 answered from memory, 1 asked")) << text;
  EXPECT_FALSE(contains(text, "nothing was replayed")) << text;
  EXPECT_TRUE(contains(text, "the automatic range looked at 5000 call(s) for an iteration (4 look(s) again), which took "
                             "7.3 ms of the program's host time"))
      << text;
  EXPECT_FALSE(contains(text, "memory resting")) << text;
  in.heuristics = {3, 1, 0, 4096, 1};  // a memory that rested once
  EXPECT_TRUE(contains(run_summary_text(in), "cuBLASLt heuristics: 3 answered from memory, 1 asked; 4096 asked without "
                                             "a look, the memory resting 1 time(s): its answers were rarely asked for again"))
      << run_summary_text(in);
  const trace::json heuristics = run_summary_json(in)["heuristics"];
  EXPECT_EQ(heuristics.value("answered_from_memory", 0), 3);
  EXPECT_EQ(heuristics.value("asked_while_memory_rested", 0), 4096);
  EXPECT_EQ(heuristics.value("memory_rests", 0), 1);
  in.hooks = {};  // none: no lines
  EXPECT_FALSE(contains(run_summary_text(in), "launched no kernel")) << run_summary_text(in);
  EXPECT_FALSE(contains(run_summary_text(in), "looked at")) << run_summary_text(in);
}

// A recording whose trial did not pay rests; tried again, the summary keeps why it rested.
TEST(RunReport, ARecordingTriedAgainKeepsWhyItRested) {
  Log log;
  RunOptions o;
  o.trial_block = 4;
  o.one_round_ms = 0;
  std::uint64_t now = 1;
  RunSession s(o, [](std::uint64_t) { return false; }, [&now] { return now; });
  s.add(recording("/tmp/t.json", {1, 2, 3, 4}, log));
  const Recording& r = *s.recordings()[0];
  bool rested = false;
  for (int i = 0; i < 200 && !(rested && r.state == RecordingState::Trial); ++i) {
    std::size_t deferred = 0;
    for (std::uint64_t f : {1, 2, 3, 4}) deferred += test::hand_over(s, sig(f), call_of(f)) == Action::Deferred;
    now += deferred ? 2'200'000 : 2'000'000;  // replayed 2.2 ms, plain 2 ms: 0.91x
    rested = rested || r.state == RecordingState::Resting;
  }
  ASSERT_EQ(r.state, RecordingState::Trial);
  s.finish("end");
  const trace::json j = run_summary_json({s, "/tmp/t.json", {}, {}, {}, {}});
  EXPECT_NE(j["recordings"][0].value("last_rested_because", "").find("replay did not pay in its trial"), std::string::npos)
      << j["recordings"][0].dump();
  EXPECT_FALSE(j["recordings"][0].contains("resting_because"));
}

TEST(RunReport, AProcessThatRecordedNothingSaysWhatTheAutomaticRangeSaw) {
  const RunSession s = trusted_session();
  const trace::json j = nothing_recorded_json(s, "/tmp/t.json", "no repeating period was found in 160 tasks", {{3, 7}, {0, 160, 1000}},
                                              {0, 40, 0, 9000, 2});
  EXPECT_EQ(j["side_threads"].value("calls", 0), 7);
  EXPECT_EQ(j["looking"].value("calls_looked_at", 0), 160);
  EXPECT_EQ(j["heuristics"].value("asked", 0), 40);  // (the memory's work is told with nothing recorded too)
  EXPECT_EQ(j["heuristics"].value("memory_rests", 0), 2);
  EXPECT_EQ(j.value("nothing_replayed_because", ""), "nothing was recorded: no repeating period was found in 160 tasks");
  // The fields of every summary, empty: tools read one shape.
  EXPECT_EQ(j.value("format", ""), "nimble-run");
  EXPECT_EQ(j.value("iterations_replayed", -1), 0);
  EXPECT_TRUE(j["recordings"].is_array() && j["recordings"].empty());
  EXPECT_TRUE(j["fallbacks"].is_array() && j["fallbacks"].empty());
  EXPECT_EQ(j.value("trace", ""), "/tmp/t.json");
  // A session whose recordings were refused keeps saying so: the refusals are the reason then.
  EXPECT_EQ(nothing_replayed_because(s, {"/tmp/t.json: refused"}, "no period"), "/tmp/t.json: refused");
}

TEST(RunReport, MismatchesWithinOneIterationAreCountedInTheSummary) {
  // The recording's first call comes twice in each step of another length: two false starts a
  // step, the second counted with the first.
  Log log;
  RunSession s = trusted_session();
  s.add(recording("/tmp/t.json", {1, 2, 1, 3}, log));
  for (int i = 0; i < 3; ++i) issue(s, {1, 5, 1, 6});
  const trace::json j = run_summary_json({s, "/tmp/t.json", {}, {}, {}, {}});
  EXPECT_EQ(j["recordings"][0].value("false_starts", -1), 6);
  EXPECT_EQ(j["recordings"][0].value("mismatches_within_one_iteration", -1), 3);
}

TEST(RunReport, AFalseStartNobodyTookOverKeepsItsReason) {
  // The program's input copy matches, then a kernel of another shape: not a fall-back (only the
  // first call matched), but the summary says why that step ran plain.
  Log log;
  RunSession s = trusted_session();
  s.add(recording("/tmp/t.json", {1, 2, 3}, log));
  for (int i = 0; i < 2; ++i) issue(s, {1, 2, 3});
  issue(s, {1, 9});
  issue(s, {1, 2, 3});
  s.finish("end");
  const trace::json j = run_summary_json({s, "/tmp/t.json", {}, {}, {}, {}});
  EXPECT_EQ(j.value("false_starts", 0), 1);
  EXPECT_TRUE(j["fallbacks"].empty());
  ASSERT_EQ(j["false_start_reasons"].size(), 1u) << j.dump();
  EXPECT_EQ(j["false_start_reasons"][0].value("count", 0), 1);
  EXPECT_FALSE(j["false_start_reasons"][0].value("reason", "").empty());
  EXPECT_EQ(j["recordings"][0]["false_start_reasons"], j["false_start_reasons"]);
}

TEST(RunReport, ACompareWithTooFewIterationsSaysSo) {
  Comparison c(10);
  EXPECT_TRUE(contains(comparison_text(c), "too few whole iterations to compare")) << comparison_text(c);
  EXPECT_TRUE(comparison_json(c)["speedup"].is_null());
  // Why the iterations that ended were not timed: the first of the block, then one that fell back.
  c.iteration_began(0, true);
  c.iteration_began(1000, true);
  c.iteration_began(2000, false);
  const trace::json untimed = comparison_json(c)["replayed"]["untimed"];
  EXPECT_EQ(untimed.value("first_of_block", 0), 1) << untimed.dump();
  EXPECT_EQ(untimed.value("not_whole", 0), 1) << untimed.dump();
  EXPECT_EQ(comparison_json(c)["plain"]["untimed"].value("not_whole", -1), 0);
  EXPECT_EQ(mean_us(3000, 2), 1.5);
  EXPECT_EQ(mean_us(3000, 0), 0.0);
}

// A model whose convolutions all hide an input from cuDNN's key gives up a hundred call sites the
// same way: one exit line for them, naming the count and the first; a site given up another way
// keeps its own line; the run summary keeps every site in full.
TEST(RunReport, CallSitesGivenUpTheSameWayShareOneExitLine) {
  const std::string hidden = "the same inputs launched other argument bytes (the key misses an input)";
  std::vector<NeverSkipped> sites;
  for (int i = 0; i < 40; ++i) {
    sites.push_back({"cudnnBackendExecute", "task " + std::to_string(10 * i), hidden, "op " + std::to_string(10 * i + 1) + ", bytes at 96: 00 then 01"});
  }
  sites.push_back({"cudnnBackendExecute", "task 999", "inputs seen before launched other work than the recording", ""});
  sites.push_back({"cublasLtMatmul", "task 5", hidden, "op 6, bytes at 8: 02 then 03"});
  const std::string text = never_skipped_text(sites);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
  EXPECT_TRUE(contains(text, "cudnnBackendExecute at 40 call sites: " + hidden + "; the first at task 0: op 1, bytes at 96: 00 then 01")) << text;
  EXPECT_FALSE(contains(text, "task 390")) << text;
  EXPECT_TRUE(contains(text, "never skipped again: cudnnBackendExecute at task 999: inputs seen before launched other work than the recording\n")) << text;
  EXPECT_TRUE(contains(text, "never skipped again: cublasLtMatmul at task 5: " + hidden + ": op 6, bytes at 8: 02 then 03\n")) << text;
  // Sites the recording rules out: their own lead and summary field.
  const std::string ruled_out = never_skipped_text({sites[0], sites[1]}, "never skipped", "never_skippable");
  EXPECT_TRUE(contains(ruled_out, "nimble run: never skipped: cudnnBackendExecute at 2 call sites: " + hidden)) << ruled_out;
  EXPECT_TRUE(contains(ruled_out, "(every site in the run summary's library.never_skippable)\n")) << ruled_out;
  const trace::json all = never_skipped_json(sites);
  ASSERT_EQ(all.size(), sites.size());
  EXPECT_EQ(all[39].get<std::string>(), "cudnnBackendExecute at task 390: " + hidden + ": op 391, bytes at 96: 00 then 01");
}

}  // namespace
}  // namespace nimble::replayer
