// The last calls the automatic range looked at, kept only with NIMBLE_DEBUG=1 and written to the
// log when no period was found: which thread issued each, on which stream, and which calls were
// alike, so a person can see why nothing repeated (JAX: copies of other threads that land in
// other places among the main thread's calls from step to step). CUDA-free, tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nimble::hooks {

class DetectorTail {
 public:
  explicit DetectorTail(std::size_t capacity = 256) : capacity_(capacity) {}

  void push(std::uint64_t signature, bool kernel, bool host_sync, std::uint64_t thread, std::uint64_t stream);
  std::size_t size() const { return calls_.size(); }

  // One token per call, oldest first: "K3@t0s1" is a kernel (K; "Y" a host sync, "T" any other
  // task) whose signature was the fourth distinct one in the tail, from the first thread seen,
  // on the second stream seen.
  std::string text() const;

 private:
  struct Call {
    std::uint64_t signature, thread, stream;
    char kind;
  };
  std::size_t capacity_;
  std::vector<Call> calls_;  // a ring once full: `next_` is the oldest
  std::size_t next_ = 0;
};

}  // namespace nimble::hooks
