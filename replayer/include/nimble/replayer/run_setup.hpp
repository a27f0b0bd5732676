// What a recorded iteration becomes under `nimble run`: the recording to replay (its plan,
// segments and matching rule), or the reason it cannot be one, or that nimble run should step
// aside (the iteration launches the program's own CUDA graphs). These are the decisions; the hooks
// add the executor that launches the graphs, and act. CUDA-free, tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nimble/replayer/run_session.hpp"
#include "nimble/replayer/side_exits.hpp"
#include "nimble/trace/trace.hpp"
#include "settings/settings.hpp"

namespace nimble::replayer {

// The program's wait, once per recording, after the window's last task (milliseconds).
struct WindowClosing {
  double cupti_stop_ms = 0;    // CUPTI detached, its activity records flushed
  double trace_build_ms = 0;   // the dependencies inferred, the trace assembled (CUPTI's durations attached)
  double trace_write_ms = 0;   // JSON written to disk (in the background: an earlier recording's file waited for)
  bool trace_written_in_background = false;  // the file is written while the program goes on (nimble run)
  // The trace is built on nimble's thread too (trace_build_ms: its tasks taken from the engine).
  bool trace_built_in_background = false;
  double window_ms = 0;        // not a wait: the window itself, the iteration run with every call described
  double total_ms() const { return cupti_stop_ms + trace_build_ms + trace_write_ms; }
};

// What the capture control knows of a recorded iteration besides its trace.
struct RecordedIteration {
  std::string path;                   // where its trace was written
  std::uint64_t first_signature = 0;  // of its first GPU call (the hooks' signature), 0: unknown
  std::uint64_t fingerprint = 0;      // of its period (period_fingerprint), 0: not found by the automatic range
  std::vector<std::size_t> event_points;  // where the program recorded or waited for events (Engine::event_points)
  // The hooks' signature of each of its calls (not syncs), in the program's order from the first
  // call that can begin its replay (first_signature); the calls before that one (host functions
  // right after the sync) come last, where the program issues them again before the next iteration.
  std::vector<std::uint64_t> call_signatures;
  std::size_t calls_before_first = 0;  // how many calls of the window came before first_signature's
  WindowClosing closing;  // what the program waited for between the window's last task and its trace on disk
  std::optional<ExitSite> side_exit;  // recorded at this exit of another recording (SideExitWindow)
};

// The settings that shape a recording (NIMBLE_RUN_*).
struct RunSetupOptions {
  std::size_t piece = settings::defaults::run_piece;               // ops per graph at most (0: whole stretches)
  std::uint32_t max_streams = settings::defaults::run_max_streams;  // streams inside the graphs
  bool multi_stream = settings::defaults::run_multi_stream;         // replay iterations over several streams
  bool skip_library = settings::defaults::run_skip_library;
  LibraryMemoOptions library;  // which calls may be skipped, how often they still run
};

struct PreparedRecording {
  std::optional<RecordingSetup> setup;  // without its make_executor; none when refused
  std::string refused_because;          // why not, when there is no setup
  bool own_graphs = false;              // the program launches its own CUDA graphs: nimble run steps aside
  bool own_streams = false;             // each op replays on the program stream it was recorded on
  std::size_t program_streams = 1;
  bool stream_graphs = false;           // the graphs span several streams (a schedule): Backend::StreamGraph
  // What was built, for the run summary's "setup" (the hooks add the graphs and variants).
  trace::json description() const;
};

// Schedules the trace (at most options.max_streams streams; one stream needs no schedule),
// builds the plan and decides. Never
// throws for a bad trace: the problem is the refusal. `trace` is left as it came (its schedule
// removed again): nimble run writes it afterwards, without the program waiting for a copy.
PreparedRecording prepare_recording(trace::Trace& trace, const RecordedIteration& recorded, const RunSetupOptions& options);

}  // namespace nimble::replayer
