// Advice drawn from a trace: patterns that cost concurrency and what the user can do about them.
#pragma once

#include <optional>
#include <string>

#include "nimble/trace/trace.hpp"

namespace nimble::cli {

// Kernels whose arguments point into one large allocation (a caching allocator's segment) all
// conflict through it, because nimble counts an argument as touching its whole allocation.
// Returns a note naming the allocation and the remedy when most kernels share one.
std::optional<std::string> shared_allocation_hint(const trace::Trace& trace);

// How the trace's iteration was captured (its `capture` field), in one line: the range, which
// iteration, what ended the window, and for the automatic range what it found; a stretch that did
// not repeat the period found (set-up or warm-up work, such as autotuning) says so and what to
// do. nullopt: the trace has no capture field.
std::optional<std::string> capture_text(const trace::Trace& trace);

}  // namespace nimble::cli
