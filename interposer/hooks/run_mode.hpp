// `nimble run` inside the program: once the recorded iteration is written, later iterations are
// checked call by call against it and launched as CUDA graphs (replayer/short_circuit.hpp
// decides, replayer/run_executor.hpp launches). The hooks call in here while running().
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hook_table.hpp"
#include "nimble/replayer/short_circuit.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::hooks {

// Schedules the recorded trace, builds one graph per segment and starts short-circuiting; says
// on stderr why not when it cannot (the program then simply runs as it is).
void start_short_circuit(trace::Trace trace);

// A GPU task of the program; `call` is null for a task nimble run does not replay. True when
// nimble has taken the call (it launches it as part of a graph): the caller must not run it.
// The call's bytes may be moved from.
bool short_circuit_takes(CUstream stream, StreamVariant variant, replayer::GpuCall* call);

// True while `nimble run --compare` is in a block of iterations the program issues itself.
inline std::atomic<bool> g_plain_phase{false};
inline bool in_plain_phase() { return g_plain_phase.load(std::memory_order_relaxed); }

// In a plain block: counts the task (`kind`, `signature` as the recorder computes them) to find
// where iterations begin and times them. True: the program runs the call itself; false: the
// block has ended and the call goes to the short-circuit (short_circuit_takes).
bool short_circuit_passes(const char* kind, std::uint64_t signature);

// A library call nimble run may skip (library_calls.def), with inputs `key`, is about to be made:
// `skip` when its ops are taken from what is known of these inputs (the library is not called);
// `observe` when it runs inside a recorded iteration and library_call_ended must follow.
struct LibraryTurn {
  bool skip = false;
  bool observe = false;
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

}  // namespace nimble::hooks
