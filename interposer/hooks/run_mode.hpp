// `nimble run` inside the program: once the recorded iteration is written, later iterations are
// checked call by call against it and launched as CUDA graphs (replayer/short_circuit.hpp
// decides, replayer/run_executor.hpp launches). The hooks call in here while running().
#pragma once

#include <cuda.h>

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

// Before a call that lets the program see results, orders other work after the stream's, or
// frees memory (`what`: "synchronized a stream", ...): deferred work must be on the GPU first.
void short_circuit_host_visible(const char* what);

}  // namespace nimble::hooks
