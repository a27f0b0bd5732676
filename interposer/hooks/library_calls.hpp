// Library entry points nimble interposes (library_calls.def): what the rest of the hooks need
// to know about them.
#pragma once

#include <cstdint>
#include <optional>

namespace nimble::hooks {

enum class Library { cublas, cublasLt, cudnn };

// The library call this thread is inside (the outermost one), while recording or running.
struct LibraryCall {
  const char* symbol = nullptr;
  std::int64_t id = -1;                  // numbered while recording tasks (the trace's library_call_id)
  std::optional<std::uint64_t> key;      // the key of its inputs, for calls nimble run can skip
};
// The outermost library call of this thread (symbol null: none); nullptr outside library calls.
extern constinit thread_local LibraryCall t_call;
inline const LibraryCall* current_library_call() { return t_call.symbol ? &t_call : nullptr; }

// A function of an interposed library that nimble does not interpose (getters), from the
// library the program loaded; nullptr when it is not there.
void* library_function(Library library, const char* name);

}  // namespace nimble::hooks
