// The generic wrapper every hook-table entry is stamped from. Idle, it costs one load of the
// real pointer and two predictable branches (host timing, mode); the first call resolves the
// real function.
#pragma once

#include <atomic>
#include <type_traits>

#include "handlers.hpp"
#include "hook_table.hpp"
#include "host_timing.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"

namespace nimble::hooks {

template <HookId Id, auto Handler, bool Funnel, class Pfn>
struct Hook;

template <HookId Id, auto Handler, bool Funnel, class R, class... A>
struct Hook<Id, Handler, Funnel, R(CUDAAPI*)(A...)> {
  using Pfn = R(CUDAAPI*)(A...);

  // The slot starts at this stub, so the hot path needs no null check.
  static R CUDAAPI resolve_then_call(A... args) {
    void* p = resolve_real(Id);
    if (!p) return missing_driver_result();
    real.store(reinterpret_cast<Pfn>(p), std::memory_order_relaxed);
    return reinterpret_cast<Pfn>(p)(args...);
  }

  static constinit inline std::atomic<Pfn> real{&resolve_then_call};

  static R CUDAAPI wrapper(A... args) {
    if (__builtin_expect(host_timing(), 0)) {
      HostTimer timer(static_cast<std::size_t>(Id));
      return dispatch(args...);
    }
    return dispatch(args...);
  }

  __attribute__((always_inline)) static R dispatch(A... args) {
    const Pfn fn = real.load(std::memory_order_relaxed);
    if constexpr (std::is_null_pointer_v<decltype(Handler)>) {
      return fn(args...);
    } else if constexpr (Funnel) {
      return Handler(hook_info(Id), fn, args...);
    } else {
      if (__builtin_expect(!recording() && !running() && !guard_paused(), 1)) return fn(args...);
      return Handler(hook_info(Id), fn, args...);
    }
  }
};

}  // namespace nimble::hooks
