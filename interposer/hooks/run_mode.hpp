// `nimble run` inside the program: each recorded iteration becomes a recording of a RunSession
// (replayer/run_session.hpp decides which recording a call belongs to, tries and drops
// recordings, and notices when the program moved on; replayer/run_executor.hpp launches). The
// hooks lock and forward here while running().
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hook_table.hpp"
#include "nimble/replayer/run_setup.hpp"
#include "nimble/replayer/short_circuit.hpp"
#include "nimble/trace/trace.hpp"
#include "trace_writer.hpp"

namespace nimble::hooks {

// What the capture control knows of a recorded iteration besides its trace.
using RecordedIteration = replayer::RecordedIteration;

// A recorded iteration's trace (before it is written): it becomes a recording (scheduled, graphs
// built; `trace` is left as it was) or is refused with the reason on stderr; the program goes on
// either way. True when nimble should look for another iteration right away (nothing replayable
// yet). Called under the recorder's lock.
bool run_recorded(trace::Trace& trace, const RecordedIteration& recorded);
// The same in the background (NIMBLE_RUN_BACKGROUND): what nimble's trace writer runs on the trace
// before writing it. It plans and builds the graphs there while the program runs on, then sets
// g_recording_ready; the program's next GPU call adds the recording (run_adopt_ready). Called on the
// program's thread, under the recorder's lock.
TraceWriter::Before run_prepare_in_background(const RecordedIteration& recorded);
inline std::atomic<bool> g_recording_ready{false};
// What nimble's thread, building graphs while the program runs on, must be kept apart from:
//  * a context-wide synchronisation fails while any stream of the context is being captured, and
//    invalidates that capture (the driver's answer: scripts/gpu/capture_isolation.cu): the
//    program's cuCtxSynchronize holds a lock that nimble's thread holds while it captures a graph;
//  * a potentially unsafe call (an allocation) from another thread invalidates a GLOBAL-mode capture
//    of the program's (torch.cuda.graph, reduce-overhead): nimble's thread builds only while no
//    capture of the program's is open, and the program's cuStreamBeginCapture waits for a build
//    under way.
// The lock a host point of this kind holds while it runs (and its bookkeeping is done); none for
// other kinds, and none in a forked child.
std::unique_lock<std::mutex> run_hold_apart(bool context_sync, bool capture_begin);
// Adds the recording made ready in the background, or tells why it cannot be one: what
// run_recorded returns, or nullopt when there was nothing to add.
std::optional<bool> run_adopt_ready();
// Whether the automatic range found this period before (recorded, refused or dropped).
bool run_knows_period(std::uint64_t fingerprint);
// Whether a live recording's iteration begins with a call of this signature. Lock-free.
bool run_begins_a_recording(std::uint64_t signature);
// At exit, when nothing was recorded: the run summary (TRACE.run.json) says why (`why`, the
// automatic range's words), so `nimble run` prints that rather than generic advice. Written only
// where no process wrote a summary first (a helper process that found nothing must not hide the
// summary of the one that replayed).
void run_nothing_recorded(const std::string& why);
// Too many recordings were dropped: nimble run stopped looking (everything is idle now).
bool run_gave_up();
// The automatic range found only known periods: what it does now. With a recording live or being
// made ready it stops looking until nimble run asks again. With none, nothing could ever ask: it
// stops for good (nimble run stops seeing calls; the caller stops recording too, the wrappers take
// the idle path), but only when the program has been `long_in_it` (AutoRange::known_streak): a loop
// inside a step (a decoder's time steps, recorded and dropped) is left after a few hundred tasks,
// and the step around it is found later (a GRU seq2seq stopped for good inside its first step).
enum class KnownOnly { LookOn, StopLooking, StopForGood };
KnownOnly run_known_only(bool long_in_it);
// The automatic range looked at `tasks` tasks and found nothing that repeats: it rests (the caller
// stops looking) until nimble run asks it to look again. The calls it rests (0: no nimble run).
std::size_t run_rest_looking(std::size_t tasks);
// How many times it rested so far (0: no nimble run, or never).
std::size_t run_look_rests();

// nimble run wants a new recording (the program moved on, or nothing is replayable): the
// automatic range should look again. The hooks act on it outside nimble run's lock.
inline std::atomic<bool> g_watch_wanted{false};
// What the automatic range should see first when it looks again (RunSession::take_primer):
// (signature, kernel) of the calls that left the recorded iteration.
std::vector<std::pair<std::uint64_t, bool>> run_take_primer();

// Lock-free fast path: whether a call with this signature concerns nimble run at all (see
// RunSession::concerns); if not, the program runs it and run_passed_by counts it.
bool run_concerns(std::uint64_t signature);
void run_passed_by();
// Lock-free: a recorded iteration (or a measured plain block) is under way (RunSession::engaged).
bool run_engaged();

// A GPU task of the program; `call` is null for a task nimble run does not replay. True when
// nimble has taken the call (it launches it as part of a graph): the caller must not run it.
// The call's bytes may be moved from.
bool short_circuit_takes(CUstream stream, StreamVariant variant, std::uint64_t signature, replayer::GpuCall* call);
// Right after short_circuit_takes left the call to the program, on the same thread: the side exit
// to record from this call (RunSession::take_side_exit_window), if nimble run wants one.
std::optional<replayer::SideExitWindow> run_take_side_exit();

// A recording window opens (nimble run records another iteration): what is held back goes out
// and running() stays false until the window closes (run_recorded), or is let go (run_resume).
void run_pause(const char* why);
void run_resume();

// The process guard (replayer/process_guard.hpp): the program's calls under nimble run, paused or
// not, are counted where every task passes (record_task). While g_guard_syncs says the guard wants
// them (judging, or a judgement due), every 64th call and each host sync (where its spans begin and
// end) ask run_guard_tick; otherwise every 1024th call does, to see when one is due (callgrind: a
// tick every 64 calls cost about 25 instructions a launch in every state nimble run rests in).
// Off once nimble run stepped aside.
inline std::atomic<bool> g_guard_counting{false};
inline std::atomic<bool> g_guard_syncs{false};
inline std::atomic<std::size_t> g_program_calls{0};
void run_guard_tick(std::size_t program_calls, bool at_host_point = false);
inline void guard_counts_call() {
  // Not a read-modify-write: a count lost between threads only makes a span a call longer.
  const std::size_t n = g_program_calls.load(std::memory_order_relaxed) + 1;
  g_program_calls.store(n, std::memory_order_relaxed);
  if ((n & (g_guard_syncs.load(std::memory_order_relaxed) ? 63 : 1023)) == 0) run_guard_tick(n);
}

// True while the program issues its own calls in a measured block (the trial, or --compare):
// library calls then run as they are.
inline std::atomic<bool> g_plain_phase{false};
inline bool in_plain_phase() { return g_plain_phase.load(std::memory_order_relaxed); }
// In such a block: counts the call; true when the program runs it (no GpuCall is built, so the
// plain iterations cost what they cost without nimble, but for a lock).
bool run_counts_plain(std::uint64_t signature);

// A library call nimble run may skip (library_calls.def), with inputs `key`, is about to be made:
// `skip` when its ops are taken from what is known of these inputs (the library is not called);
// `observe` when it runs inside a recorded iteration and library_call_ended must follow.
struct LibraryTurn {
  bool skip = false;
  bool observe = false;
  std::size_t recording = 0;  // which recording's memo
  std::size_t site = 0;
  std::uint64_t key = 0;
  std::size_t started = 0;  // the short-circuit's iteration count when the call began
};
LibraryTurn library_call_begins(const char* symbol, std::uint64_t key);
void library_call_ended(const LibraryTurn& turn, bool succeeded, std::uint64_t host_ns);

// A stream-ordered free (cuMemFreeAsync) while calls that may use the memory are held back: kept,
// and issued in order once those calls are on the GPU (or issued on fall-back), so the memory is
// not handed out again before they ran. True when nimble keeps it (the caller returns success).
// A free on another stream than the replayed one makes the held-back calls go out first.
using FreeAsyncFn = CUresult(CUDAAPI*)(CUdeviceptr, CUstream);
bool short_circuit_holds_free(FreeAsyncFn real, CUdeviceptr ptr, CUstream stream, StreamVariant variant);

// Before a call that lets the program see results, orders other work after the stream's, or
// frees memory (`what`: "synchronized a stream", ...): deferred work must be on the GPU first.
void short_circuit_host_visible(const char* what);
// The program's thread waited for the GPU: the next call may begin a recorded iteration whose first
// call also comes inside it (RunSession::host_synchronized). Lock-free.
void run_host_synchronized();
// A side thread's copy or memset (from_side_thread), about to run as the program's own: what is
// held back goes out first when it shares a stream with it (or either is the legacy stream, which
// waits for the others); on other streams only the program's events order them.
void short_circuit_side_call(CUstream stream, StreamVariant variant);

}  // namespace nimble::hooks
