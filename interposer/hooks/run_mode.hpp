// `nimble run` inside the program: once the recorded iteration is written, later iterations are
// checked call by call against it and launched as CUDA graphs (replayer/short_circuit.hpp
// decides, replayer/run_executor.hpp launches). The hooks call in here while running().
#pragma once

#include <cuda.h>

#include <atomic>
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

// Before a call that lets the program see results, orders other work after the stream's, or
// frees memory (`what`: "synchronized a stream", ...): deferred work must be on the GPU first.
void short_circuit_host_visible(const char* what);

}  // namespace nimble::hooks
