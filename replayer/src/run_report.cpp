#include "nimble/replayer/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "run_session_parts.hpp"

namespace nimble::replayer {
namespace {

trace::json phase_json(const IterationTimes& t) {
  return {{"iterations", t.iterations}, {"median_ms", t.median_ms}, {"p10_ms", t.p10_ms}, {"p90_ms", t.p90_ms}};
}

std::string library_text(const LibraryMemo& memo) {
  std::string text;
  char line[300];
  for (const auto& [symbol, s] : memo.stats()) {
    const double run_us = mean_us(s.run_ns, s.runs_timed);
    std::snprintf(line, sizeof line, "nimble run: %s: %zu of %zu calls skipped (%.1f us each when run: about %.1f ms saved)\n",
                  symbol.c_str(), s.skipped, s.calls, run_us, run_us * static_cast<double>(s.skipped) / 1e3);
    text += line;
  }
  return text + never_skipped_text(memo.unskippable(), "never skipped", "never_skippable") + never_skipped_text(memo.disabled());
}

std::string heuristics_text(const HeuristicsCounts& q) {
  if (!q.answered && !q.asked && !q.rested) return "";
  char line[400];
  char rested[200] = "";
  if (q.rests) {
    std::snprintf(rested, sizeof rested, "; %zu asked without a look, the memory resting %zu time(s): its answers were rarely asked for again",
                  q.rested, q.rests);
  }
  std::snprintf(line, sizeof line, "nimble run: cuBLASLt heuristics: %zu answered from memory, %zu asked%s%s\n", q.answered,
                q.asked, q.unstable ? " (some inputs gave changing answers: always asked)" : "", rested);
  return line;
}

// [{reason, count}], in the order of the reasons.
trace::json reasons_json(const std::map<std::string, std::size_t>& counts) {
  trace::json out = trace::json::array();
  for (const auto& [reason, count] : counts) out.push_back({{"reason", reason}, {"count", count}});
  return out;
}

trace::json recording_json(const RunSession& session, const Recording& rec, const RecordingExtras& extras,
                           const HeuristicsCounts& heuristics) {
  const ShortCircuitSummary& s = rec.short_circuit->summary();
  trace::json j = {{"trace", rec.name},
                   {"calls", rec.calls},
                   {"state", state_name(rec.state)},
                   {"iterations_replayed", s.iterations_replayed},
                   {"false_starts", s.false_starts},
                   {"false_start_reasons", reasons_json(s.false_start_reasons)},
                   {"fallbacks", reasons_json(s.fallbacks)},
                   {"fallbacks_taken_by_side_exits", rec.fallbacks_to_side_exits},
                   {"switches_to_unrecorded_iterations", rec.switches_to_unrecorded},
                   {"mismatches_within_one_iteration", rec.mismatches_in_one_iteration},
                   {"setup", extras.setup},
                   {"graphs", extras.graphs}};
  if (rec.state == RecordingState::Dropped) j["dropped_because"] = rec.dropped_because;
  if (rec.state == RecordingState::Resting) j["resting_because"] = rec.resting_because;
  if (session_parts::replays(rec) && !rec.last_rested_because.empty()) {
    j["last_rested_because"] = rec.last_rested_because;
  }
  // Its warm-up found its buffers moving every iteration: the nodes rewritten each time, at least.
  if (!rec.buffers_move.empty()) j["buffers_move"] = rec.buffers_move;
  if (!rec.earlier_trials.empty()) {
    j["earlier_trial_speedups"] = trace::json::array();  // null: a trial that timed nothing
    for (double x : rec.earlier_trials) j["earlier_trial_speedups"].push_back(x > 0 ? trace::json(x) : trace::json(nullptr));
  }
  if (!rec.earlier_timings.empty()) {
    j["earlier_trial_timings"] = trace::json::array();
    for (const auto& c : rec.earlier_timings) j["earlier_trial_timings"].push_back(comparison_json(*c));
  }
  if (const std::string undecided = session.undecided_trial(rec); !undecided.empty()) j["undecided_because"] = undecided;
  if (rec.trial_speedup) j["trial_speedup"] = *rec.trial_speedup;
  if (rec.rechecks > 0) j["rechecks"] = rec.rechecks;  // trials that checked a kept recording again
  if (rec.exit_of && rec.exit_of->recording < session.recordings().size()) {
    j["side_exit_of"] = {{"trace", session.recordings()[rec.exit_of->recording]->name},
                         {"after_calls", rec.exit_of->after_calls}};
  }
  if (rec.comparison) j["timings"] = comparison_json(*rec.comparison);
  if (rec.memo) j["library"] = library_json(*rec.memo, heuristics);
  return j;
}

const RecordingExtras& extras_of(const RunReportInput& in, std::size_t i) {
  static const RecordingExtras none;
  return i < in.extras.size() ? in.extras[i] : none;
}

}  // namespace

// One line per library function and reason: a model can give up a hundred call sites the same way,
// and the exit lines must stay readable (every site is in the run summary).
std::string never_skipped_text(const std::vector<NeverSkipped>& sites, const std::string& lead, const std::string& json_key) {
  struct Group {
    const NeverSkipped* first;  // the first site given up this way
    std::size_t sites;
  };
  std::vector<Group> groups;  // in the order first given up
  for (const NeverSkipped& site : sites) {
    auto same = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.first->symbol == site.symbol && g.first->reason == site.reason;
    });
    if (same == groups.end()) groups.push_back({&site, 1});
    else ++same->sites;
  }
  std::string text;
  for (const auto& [first, count] : groups) {
    text += "nimble run: " + lead + ": ";
    if (count == 1) {
      text += first->text() + "\n";
      continue;
    }
    text += first->symbol + " at " + std::to_string(count) + " call sites: " + first->reason + "; the first at " + first->at +
            (first->detail.empty() ? "" : ": " + first->detail) + " (every site in the run summary's library." + json_key + ")\n";
  }
  return text;
}

double mean_us(std::uint64_t ns, std::size_t n) { return n ? static_cast<double>(ns) / 1e3 / static_cast<double>(n) : 0.0; }

const Recording* main_recording(const RunSession& session, std::size_t* index) {
  const Recording* best = nullptr;
  const auto& all = session.recordings();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!best || all[i]->short_circuit->summary().iterations_replayed > best->short_circuit->summary().iterations_replayed) {
      best = all[i].get();
      *index = i;
    }
  }
  return best;
}

std::string nothing_replayed_because(const RunSession& session, const std::vector<std::string>& refusals,
                                     const std::string& nothing_recorded) {
  if (session.iterations_replayed() > 0) return "";
  std::string why;
  for (const std::string& refusal : refusals) why += (why.empty() ? "" : "; ") + refusal;
  for (const auto& rec : session.recordings()) {
    if (rec->state == RecordingState::Dropped) {
      why += (why.empty() ? "" : "; ") + rec->name + " was dropped: " + rec->dropped_because;
    } else if (rec->state == RecordingState::Resting) {
      why += (why.empty() ? "" : "; ") + rec->name + " rests: " + rec->resting_because;
    } else if (const std::string failure = most_frequent_failure(rec->short_circuit->summary()); !failure.empty()) {
      // Its first calls came again, the rest not as recorded (threads whose calls interleave
      // differently from one iteration to the next, as JAX's transfer threads do).
      why += (why.empty() ? "" : "; ") + rec->name + " began to match the program's calls but no iteration ran to its end as recorded; most often: " + failure;
    } else {
      why += (why.empty() ? "" : "; ") + rec->name + " never matched the program's later calls";
    }
  }
  if (why.empty() && !nothing_recorded.empty()) return "nothing was recorded: " + nothing_recorded;
  return why.empty() ? "no recorded iteration could be replayed" : why;
}

std::string replay_ended_text(std::size_t replayed, const std::string& why) {
  return "replay ended after " + std::to_string(replayed) + " iteration(s); the rest ran as the program issued it: " + why;
}

std::string replay_ended_because(const RunSession& session) {
  if (session.iterations_replayed() == 0) return "";
  std::string why;
  for (const auto& rec : session.recordings()) {
    if (rec->state != RecordingState::Dropped) return "";
    if (rec->exit_of) continue;  // (dropped with its parent, or as a piece of it: the parent's reason says it)
    why += (why.empty() ? "" : "; ") + rec->name + " was dropped: " + rec->dropped_because;
  }
  return why;
}

trace::json comparison_json(const Comparison& c) {
  const IterationTimes replayed = c.times(Phase::Replay), plain = c.times(Phase::Plain);
  trace::json j = {{"block", c.block()}, {"replayed", phase_json(replayed)}, {"plain", phase_json(plain)}};
  // Each timed iteration, in order: a trial misled by a slow stretch, or by replay still learning, shows.
  constexpr std::size_t kMostShown = 256;  // --compare times for good: the first ones
  auto rounded = [](const std::vector<double>& ms) {
    trace::json out = trace::json::array();
    for (std::size_t i = 0; i < ms.size() && i < kMostShown; ++i) out.push_back(std::round(ms[i] * 1000.0) / 1000.0);
    return out;
  };
  j["replayed"]["each_ms"] = rounded(c.samples(Phase::Replay));
  // What replay did in each (parallel to each_ms): a slow one that made execs was still learning.
  trace::json execs = trace::json::array(), writes = trace::json::array();
  for (const IterationWork& w : c.work(Phase::Replay)) {
    if (execs.size() >= kMostShown) break;
    execs.push_back(w.execs);
    writes.push_back(w.writes);
  }
  j["replayed"]["each_execs_made"] = execs;
  j["replayed"]["each_node_writes"] = writes;
  j["plain"]["each_ms"] = rounded(c.samples(Phase::Plain));
  for (const auto& [phase, key] : {std::pair{Phase::Replay, "replayed"}, std::pair{Phase::Plain, "plain"}}) {
    const UntimedIterations& u = c.untimed(phase);
    j[key]["untimed"] = {{"not_whole", u.not_whole}, {"first_of_block", u.first_of_block}};
  }
  j["speedup"] = replayed.median_ms > 0 && plain.median_ms > 0 ? trace::json(plain.median_ms / replayed.median_ms)
                                                               : trace::json(nullptr);
  return j;
}

std::string comparison_text(const Comparison& c) {
  const IterationTimes replayed = c.times(Phase::Replay), plain = c.times(Phase::Plain);
  char line[400];
  if (replayed.iterations == 0 || plain.iterations == 0) {
    std::snprintf(line, sizeof line,
                  "nimble run: compare: too few whole iterations to compare (%zu replayed, %zu plain timed); "
                  "run more iterations or a smaller --compare block\n",
                  replayed.iterations, plain.iterations);
    return line;
  }
  std::snprintf(line, sizeof line,
                "nimble run: compare (this process, alternating blocks of %zu iterations): median iteration "
                "%.3f ms plain, %.3f ms replayed: %.2fx (p10-p90 %.3f-%.3f and %.3f-%.3f ms; %zu and %zu iterations)\n",
                c.block(), plain.median_ms, replayed.median_ms, plain.median_ms / replayed.median_ms, plain.p10_ms,
                plain.p90_ms, replayed.p10_ms, replayed.p90_ms, plain.iterations, replayed.iterations);
  return line;
}

trace::json never_skipped_json(const std::vector<NeverSkipped>& sites) {
  trace::json out = trace::json::array();
  for (const NeverSkipped& site : sites) out.push_back(site.text());
  return out;
}

trace::json library_json(const LibraryMemo& memo, const HeuristicsCounts& q) {
  trace::json calls = trace::json::object();
  for (const auto& [symbol, s] : memo.stats()) {
    const double run_us = mean_us(s.run_ns, s.runs_timed);
    calls[symbol] = {{"calls", s.calls}, {"skipped", s.skipped}, {"run_us_mean", run_us},
                     {"saved_ms_estimate", run_us * static_cast<double>(s.skipped) / 1e3}};
  }
  return {{"calls", calls},
          {"never_skipped", never_skipped_json(memo.disabled())},
          {"never_skippable", never_skipped_json(memo.unskippable())},
          {"heuristics_answered_from_memory", q.answered},
          {"heuristics_asked", q.asked},
          {"heuristics_unstable", q.unstable}};
}

trace::json run_summary_json(const RunReportInput& in) {
  const RunSession& session = in.session;
  std::size_t main_index = 0;
  // No recording at all when every recorded iteration was refused (or the program's own graphs):
  // the summary then has the counts (zero) and why, without a main recording's setup and graphs.
  const Recording* main = main_recording(session, &main_index);
  std::size_t deferred = 0, host_copies = 0, collectives = 0, program_graphs = 0, false_starts = 0;
  std::map<std::string, std::size_t> reasons, false_start_reasons;
  trace::json recordings = trace::json::array();
  for (std::size_t i = 0; i < session.recordings().size(); ++i) {
    const ShortCircuitSummary& s = session.recordings()[i]->short_circuit->summary();
    deferred += s.calls_deferred;
    host_copies += s.host_copies;
    collectives += s.collectives;
    program_graphs += s.program_graphs;
    false_starts += s.false_starts;
    for (const auto& [reason, count] : s.fallbacks) reasons[reason] += count;
    for (const auto& [reason, count] : s.false_start_reasons) false_start_reasons[reason] += count;
    recordings.push_back(recording_json(session, *session.recordings()[i], extras_of(in, i), in.heuristics));
  }
  trace::json summary = {{"format", "nimble-run"},
                         {"version", 1},
                         {"trace", in.trace_path},
                         {"iterations_replayed", session.iterations_replayed()},
                         {"segments_launched", session.segments_launched()},
                         {"calls_deferred", deferred},
                         {"host_copies_run_in_place", host_copies},
                         {"collectives_run_in_place", collectives},
                         {"program_graphs_run_in_place", program_graphs},
                         {"false_starts", false_starts},
                         {"false_start_reasons", reasons_json(false_start_reasons)},
                         {"frees_held_back", session.frees_held()},
                         {"fallbacks", reasons_json(reasons)},
                         {"recordings", recordings},
                         {"refused", in.refusals},
                         {"calls_seen", session.calls_seen()},
                         {"look_rests", session.look_rests()},
                         {"looks_that_found_only_known", session.known_only_looks()},
                         {"side_threads", side_threads_json(in.hooks.side_threads)},
                         {"looking", looking_json(in.hooks.looking)},
                         {"heuristics", heuristics_json(in.heuristics)},
                         {"guard", guard_json(session.guard())}};
  summary["guard"]["program_calls"] = in.hooks.program_calls;
  if (const std::string why = nothing_replayed_because(session, in.refusals); !why.empty()) {
    summary[kNothingReplayedBecause] = why;
  }
  if (const std::string why = replay_ended_because(session); !why.empty()) summary[kReplayEndedBecause] = why;
  if (main) {
    summary["setup"] = extras_of(in, main_index).setup;
    summary["graphs"] = extras_of(in, main_index).graphs;
    if (session.options().compare_block > 0 && main->comparison) summary["compare"] = comparison_json(*main->comparison);
    if (main->memo) summary["library"] = library_json(*main->memo, in.heuristics);
  }
  return summary;
}

trace::json guard_json(const ProcessGuard& guard) {
  trace::json out = {{"state", guard.options().spans == 0 ? "off" : guard_state_name(guard.state())},
                     {"judgements", guard.judgements()},
                     {"paused_ns_per_call", guard.paused_spans()},
                     {"running_ns_per_call", guard.running_spans()},
                     {"spoiled_spans", guard.spoiled_spans()},
                     {"longest_sync_gap_calls", guard.sync_gap()}};
  if (guard.last_ratio()) out["paused_over_running"] = *guard.last_ratio();
  if (guard.judgements() > 0) out["verdict_at_call"] = guard.verdict_at();
  return out;
}

trace::json heuristics_json(const HeuristicsCounts& q) {
  return {{"answered_from_memory", q.answered}, {"asked", q.asked}, {"unstable", q.unstable},
          {"asked_while_memory_rested", q.rested}, {"memory_rests", q.rests}};
}

trace::json looking_json(const LookCounts& counts) {
  return {{"looks", counts.looks}, {"calls_looked_at", counts.calls}, {"host_ms", static_cast<double>(counts.host_ns) / 1e6}};
}

trace::json side_threads_json(const SideThreadCounts& counts) {
  return {{"threads", counts.threads}, {"calls", counts.calls}};
}

trace::json nothing_recorded_json(const RunSession& session, const std::string& trace_path, const std::string& why,
                                  const HookCounts& hooks, const HeuristicsCounts& heuristics) {
  trace::json summary = run_summary_json({session, trace_path, {}, {}, heuristics, hooks});
  summary[kNothingReplayedBecause] = nothing_replayed_because(session, {}, why);
  return summary;
}

std::string run_summary_text(const RunReportInput& in) {
  const RunSession& session = in.session;
  std::string text = session.summary_text();
  for (const auto& rec : session.recordings()) {
    if (rec->memo) text += library_text(*rec->memo);
  }
  text += heuristics_text(in.heuristics);
  if (in.hooks.side_threads.calls > 0) {
    text += "nimble run: " + std::to_string(in.hooks.side_threads.calls) + " call(s) of " + std::to_string(in.hooks.side_threads.threads) +
            " thread(s) that launched no kernel ran as the program's own (neither recorded nor matched)\n";
  }
  if (const LookCounts& look = in.hooks.looking; look.calls > 0) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", static_cast<double>(look.host_ns) / 1e6);
    text += "nimble run: the automatic range looked at " + std::to_string(look.calls) + " call(s) for an iteration (" +
            std::to_string(look.looks) + " look(s) again), which took " + ms + " ms of the program's host time\n";
  }
  std::size_t main_index = 0;
  const Recording* main = main_recording(session, &main_index);
  if (main && session.options().compare_block > 0 && main->comparison) text += comparison_text(*main->comparison);
  if (const std::string why = nothing_replayed_because(session, in.refusals); !why.empty()) {
    text += "nimble run: nothing was replayed: " + why + "\n";
  }
  if (const std::string why = replay_ended_because(session); !why.empty()) {
    text += "nimble run: " + replay_ended_text(session.iterations_replayed(), why) + "\n";
  }
  return text;
}

trace::json wait_json(const RecordingWait& w) {
  const WindowClosing& c = w.closing;
  return {{"total", w.total_ms()},
          {"cupti_stop", c.cupti_stop_ms},
          {"trace_build", c.trace_build_ms},
          {"trace_built_in_background", c.trace_built_in_background},
          {"background_trace_build", w.background_trace_ms},
          {"trace_write", c.trace_write_ms},
          {"trace_written_in_background", c.trace_written_in_background},
          {"plan", w.plan_ms},
          {"graphs", w.graphs_ms},
          {"plan_and_graphs_in_background", w.in_background},
          {"graphs_rebuilt", w.graphs_rebuilt_ms},
          {"graphs_rebuilt_because", w.graphs_rebuilt_because},
          {"ready_after", w.ready_after_ms}};
}

std::string wait_text(const RecordingWait& w) {
  const WindowClosing& c = w.closing;
  const auto ms = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", v);
    return std::string(text);
  };
  std::string parts;
  if (c.cupti_stop_ms >= 0.05) parts += "CUPTI " + ms(c.cupti_stop_ms) + ", ";
  parts += (c.trace_built_in_background ? "trace taken " : "trace built ") + ms(c.trace_build_ms);
  // In the background the write waited for is an earlier recording's file, if any.
  if (!c.trace_written_in_background) parts += " and written " + ms(c.trace_write_ms);
  if (!w.in_background) parts += ", plan " + ms(w.plan_ms) + ", graphs " + ms(w.graphs_ms);
  if (!w.graphs_rebuilt_because.empty()) {
    parts += ", graphs built on its thread " + ms(w.graphs_rebuilt_ms) + " (" + w.graphs_rebuilt_because + ")";
  }
  if (c.trace_written_in_background && c.trace_write_ms >= 0.1) parts += ", an earlier trace file " + ms(c.trace_write_ms);
  if (c.trace_written_in_background) parts += "; the trace file is written meanwhile";
  std::string text = "the program waited " + ms(w.total_ms()) + " ms (" + parts + ")";
  if (w.in_background) {
    text += std::string("; ") + (c.trace_built_in_background ? "trace (" + ms(w.background_trace_ms) + " ms), plan (" : "plan (") +
            ms(w.plan_ms) + " ms) and graphs (" + ms(w.graphs_ms) + " ms) were made while it ran on, ready " +
            ms(w.ready_after_ms) + " ms after the window closed";
  }
  return text;
}

}  // namespace nimble::replayer
