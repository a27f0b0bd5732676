// NIMBLE_HOST_TIMES=1: counts every intercepted driver and library call and the host time spent
// inside it, and prints the table at exit. It answers "where does this program's host time go",
// and so what `nimble run` can save by not making a call. Works in every mode, idle included;
// when off it costs one predictable branch per call.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace nimble::hooks {

inline std::atomic<bool> g_host_timing{false};
inline bool host_timing() { return g_host_timing.load(std::memory_order_relaxed); }

// Slots: driver hooks by HookId, then library hooks (library_calls.def order).
std::size_t host_timing_slots();
void add_host_time(std::size_t slot, std::uint64_t ns);
// A call's time that no other timed call of its thread encloses: what the program spent inside
// nimble's wrappers altogether (nimble_host_ns_inside() reads the sum).
void add_outermost_host_time(std::uint64_t ns);
inline thread_local int t_timed_depth = 0;
// Turns timing on and prints the table at exit (called once, from start-up).
void start_host_timing();

class HostTimer {
 public:
  explicit HostTimer(std::size_t slot) : slot_(slot), start_(std::chrono::steady_clock::now()) { ++t_timed_depth; }
  ~HostTimer() {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
    add_host_time(slot_, static_cast<std::uint64_t>(ns.count()));
    if (--t_timed_depth == 0) add_outermost_host_time(static_cast<std::uint64_t>(ns.count()));
  }
  HostTimer(const HostTimer&) = delete;
  HostTimer& operator=(const HostTimer&) = delete;

 private:
  std::size_t slot_;
  std::chrono::steady_clock::time_point start_;
};

// Library hooks: how many there are and their names (library_calls.cpp).
std::size_t library_hook_count();
const char* library_hook_name(std::size_t index);

}  // namespace nimble::hooks
