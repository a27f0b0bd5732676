// `nimble bench` inside the recorded process (NIMBLE_BENCH=N): right after the trace is written,
// schedule it, replay the iteration N times with every backend (replayer/bench.hpp), restore the
// program's memory, print the table and write the results beside the trace.
#pragma once

#include <optional>

#include "nimble/trace/trace.hpp"

namespace nimble::hooks {

// `framework_ms`: the program's own iteration time, when it was measured.
void bench_recorded_iteration(trace::Trace trace, std::optional<double> framework_ms);

}  // namespace nimble::hooks
