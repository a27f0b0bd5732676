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

}  // namespace nimble::cli
