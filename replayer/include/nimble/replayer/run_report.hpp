// nimble run's exit summary (TRACE.run.json, and the lines it prints on stderr), from the session
// and what the hooks add of their own (each recording's setup and graph statistics, the cuBLASLt
// heuristics they answered). CUDA-free, tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nimble/replayer/run_session.hpp"
#include "nimble/replayer/run_setup.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::replayer {

double mean_us(std::uint64_t ns, std::size_t n);  // 0 when n is 0

// cuBLASLt heuristics answered from memory (interposer/hooks/library_queries.hpp): one count for
// the whole process.
struct HeuristicsCounts {
  std::size_t answered = 0, asked = 0, unstable = 0;
  std::size_t rested = 0, rests = 0;  // asked straight while the memory rested, and how often it did
};

// What the hooks know of each recording (the session numbers them): what was built, and its
// graphs' launches and node writes.
struct RecordingExtras {
  trace::json setup = trace::json::object();
  trace::json graphs = trace::json::object();
};

// What the program waited for when a recording was added: its trace, then (unless they were made
// in the background) its plan and graphs. Once per recording, it is the cost a short run cannot
// win back.
struct RecordingWait {
  WindowClosing closing;
  double plan_ms = 0;    // scheduled, planned and cut into segments (prepare_recording)
  double graphs_ms = 0;  // its graphs built and instantiated
  // Plan and graphs made on nimble's thread while the program ran on (NIMBLE_RUN_BACKGROUND):
  // not waited for. The recording could replay from the program's first GPU call this long after
  // the window closed (with the wait, when made on the program's thread).
  bool in_background = false;
  double ready_after_ms = 0;
  double background_trace_ms = 0;  // the trace built there (closing.trace_built_in_background)
  // Graphs that could not be built there (why), built again on the program's thread: waited for.
  std::string graphs_rebuilt_because;
  double graphs_rebuilt_ms = 0;
  double total_ms() const {
    return closing.total_ms() + (in_background ? graphs_rebuilt_ms : plan_ms + graphs_ms);
  }
};
trace::json wait_json(const RecordingWait& wait);    // a recording's setup.program_waited_ms
std::string wait_text(const RecordingWait& wait);    // "the program waited 41.5 ms (trace built ...)"

// Calls of side threads (threads that had launched no kernel or graph: JAX's transfer threads),
// which ran as the program's own, neither looked at, recorded nor matched (NIMBLE_RUN_SIDE_THREADS).
struct SideThreadCounts {
  std::size_t threads = 0, calls = 0;
};
trace::json side_threads_json(const SideThreadCounts& counts);  // the summary's "side_threads"

// What the automatic range's looks for another iteration cost: each call it looked at was shown to
// it before it ran, under the recorder's lock. `looks`: how often nimble run asked it to look again.
struct LookCounts {
  std::size_t looks = 0, calls = 0;
  std::uint64_t host_ns = 0;
};
trace::json looking_json(const LookCounts& counts);  // the summary's "looking"

// What the hooks counted, for the summary.
struct HookCounts {
  SideThreadCounts side_threads;
  LookCounts looking;
  std::size_t program_calls = 0;  // the program's calls as the process guard counts them (the summary's guard)
};

struct RunReportInput {
  const RunSession& session;
  std::string trace_path;
  std::vector<std::string> refusals;     // recorded iterations that could not be replayed, and why
  std::vector<RecordingExtras> extras;   // per recording
  HeuristicsCounts heuristics;
  HookCounts hooks;
};

// The recording that replayed most (its graphs, library calls and timings head the summary); null
// when there is none. `index` gets its place among the session's recordings.
const Recording* main_recording(const RunSession& session, std::size_t* index);
// Why nothing was replayed, in one line, or "" when something was.
std::string nothing_replayed_because(const RunSession& session, const std::vector<std::string>& refusals,
                                     const std::string& nothing_recorded = "");

// The process guard's state and last judgement (the summary's "guard").
trace::json guard_json(const ProcessGuard& guard);
trace::json comparison_json(const Comparison& comparison);
std::string comparison_text(const Comparison& comparison);  // --compare's result line
trace::json library_json(const LibraryMemo& memo, const HeuristicsCounts& heuristics);
trace::json heuristics_json(const HeuristicsCounts& heuristics);  // the summary's "heuristics"
trace::json never_skipped_json(const std::vector<NeverSkipped>& sites);  // each site in full
// The exit lines, grouped: sites given up while running ("never skipped again", the summary's
// library.never_skipped), or ruled out by the recording ("never skipped", library.never_skippable).
std::string never_skipped_text(const std::vector<NeverSkipped>& sites, const std::string& lead = "never skipped again",
                               const std::string& json_key = "never_skipped");

// The summary's field that says why nothing was replayed (read back by `nimble run`).
inline constexpr const char* kNothingReplayedBecause = "nothing_replayed_because";
// Iterations were replayed, but every recording was dropped by the end: why each was ("" when one is
// still live). The summary's field of the same words (read back by `nimble run`).
std::string replay_ended_because(const RunSession& session);
// Its exit line's words, after `replayed` iterations (nimble run's last lines repeat them).
std::string replay_ended_text(std::size_t replayed, const std::string& why);
inline constexpr const char* kReplayEndedBecause = "replay_ended_because";
trace::json run_summary_json(const RunReportInput& in);  // TRACE.run.json
// TRACE.run.json of a process that recorded no iteration at all (`session` has no recording):
// the same fields, nothing replayed because `why` (the automatic range's words: "no repeating
// period was found in ...").
trace::json nothing_recorded_json(const RunSession& session, const std::string& trace_path, const std::string& why,
                                  const HookCounts& hooks = {}, const HeuristicsCounts& heuristics = {});
std::string run_summary_text(const RunReportInput& in);  // the lines printed at exit

}  // namespace nimble::replayer
