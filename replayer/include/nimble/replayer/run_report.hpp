// nimble run's exit summary (TRACE.run.json, and the lines it prints on stderr), from the session
// and what the hooks add of their own (each recording's setup and graph statistics, the cuBLASLt
// heuristics they answered). CUDA-free, tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nimble/replayer/run_session.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::replayer {

double mean_us(std::uint64_t ns, std::size_t n);  // 0 when n is 0

// cuBLASLt heuristics answered from memory (interposer/hooks/library_queries.hpp): one count for
// the whole process.
struct HeuristicsCounts {
  std::size_t answered = 0, asked = 0, unstable = 0;
};

// What the hooks know of each recording (the session numbers them): what was built, and its
// graphs' launches and node writes.
struct RecordingExtras {
  trace::json setup = trace::json::object();
  trace::json graphs = trace::json::object();
};

struct RunReportInput {
  const RunSession& session;
  std::string trace_path;
  std::vector<std::string> refusals;     // recorded iterations that could not be replayed, and why
  std::vector<RecordingExtras> extras;   // per recording
  HeuristicsCounts heuristics;
};

// The recording that replayed most (its graphs, library calls and timings head the summary); null
// when there is none. `index` gets its place among the session's recordings.
const Recording* main_recording(const RunSession& session, std::size_t* index);
// Why nothing was replayed, in one line, or "" when something was.
std::string nothing_replayed_because(const RunSession& session, const std::vector<std::string>& refusals);

trace::json comparison_json(const Comparison& comparison);
std::string comparison_text(const Comparison& comparison);  // --compare's result line
trace::json library_json(const LibraryMemo& memo, const HeuristicsCounts& heuristics);

trace::json run_summary_json(const RunReportInput& in);  // TRACE.run.json
std::string run_summary_text(const RunReportInput& in);  // the lines printed at exit

}  // namespace nimble::replayer
