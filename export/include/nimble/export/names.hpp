// Short, readable task names for timelines and graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nimble/trace/trace.hpp"

namespace nimble::exporter {

// A demangled C++ kernel name cut to something a person can read in a slice or a graph node:
// the return type, the parameter list and the namespaces are dropped, long template argument
// lists become "<...>" (short ones such as "<float, 4>" are kept), and what is still longer than
// `max_length` bytes keeps its beginning and end around "..." (never splitting a UTF-8 character).
//   "void at::native::vectorized_elementwise_kernel<4, at::native::...>(int, ...)"
//     -> "vectorized_elementwise_kernel<...>"
// Names that are not C++ signatures (extern "C", cuDNN's "sm90_xmma_...") lose only namespaces
// and long template arguments and are length-capped. Control characters become spaces. Never returns an empty string for a non-blank input.
std::string shorten_kernel_name(std::string_view name, std::size_t max_length = 48);

// The name of a task as the trace gives it: `name` when it is a non-empty string; otherwise
// `mangled` demangled (or as is when it is not an Itanium C++ symbol); otherwise empty.
std::string full_task_name(const trace::Task& task);

// What a task is called in a timeline slice or a graph node: shorten_kernel_name(full name), or,
// for a task without a name, its kind, a detail when the trace has one (memcpy direction, what a
// sync waited for) and, when `with_id`, its id: "memcpy HtoD #0", "sync stream #12", "kernel #7".
std::string display_name(const trace::Task& task, std::size_t max_length = 48, bool with_id = true);

// Microseconds rounded to whole nanoseconds, in the shortest form that reads back: "168.4", "12",
// "0.001".
std::string format_us(double us);

// Microseconds to whole nanoseconds (rounded); negative and non-finite inputs give 0.
std::int64_t to_ns(double us);

}  // namespace nimble::exporter
