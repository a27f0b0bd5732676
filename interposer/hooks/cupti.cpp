#include "cupti.hpp"

#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "real_driver.hpp"
#include "recorder.hpp"
#include "settings/settings.hpp"

namespace nimble::hooks::cupti {
namespace {

// CUPTI entry points, resolved from libcupti at the first capture (never linked).
struct Api {
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityDisable) activity_disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiGetGraphNodeId) graph_node_id = nullptr;  // optional
  decltype(&cuptiGetGraphExecId) graph_exec_id = nullptr;  // optional
  decltype(&cuptiFinalize) finalize = nullptr;              // optional
};

constexpr std::size_t kBufferBytes = 8u << 20;
constexpr CUpti_ActivityKind kActivityKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                 CUPTI_ACTIVITY_KIND_MEMCPY,
                                                 CUPTI_ACTIVITY_KIND_MEMSET};

struct State {
  std::mutex mu;
  Api api;
  bool load_tried = false;
  bool loaded = false;
  std::string load_error;
  CUpti_SubscriberHandle subscriber = nullptr;
  bool callbacks_registered = false;
  std::unordered_map<std::uint32_t, Timing> timings;
  std::map<std::pair<std::uint32_t, std::uint64_t>, Timing> graph_timings;  // (launch, node id)
  std::uint64_t kernel_records = 0;
  std::uint64_t graph_kernel_records = 0;  // kernels that ran as nodes of a graph launch
  std::uint32_t first_correlation = 0;  // records before the window's first task are not counted
};

State& state() {
  static State* s = new State();  // leaked on purpose: CUPTI threads may call in at exit
  return *s;
}

thread_local std::uint32_t t_correlation = 0;
std::atomic<bool> g_window_open{false};
// Once the window's records are in, CUPTI detaches from the process (cuptiFinalize, at the exit
// of the next driver call, where NVIDIA documents it as safe): a subscriber left attached, even
// with every activity kind disabled, measured 0.13 ms per step on a program that launches its
// own CUDA graph (246 kernels) after nimble run stepped aside (H100). Only nimble's own
// subscriber exists then (cuptiSubscribe fails while a profiler such as PyTorch's holds one, and
// nimble then never starts), and a profiler started later attaches CUPTI again.
std::atomic<bool> g_detach_requested{false};
std::atomic<bool> g_detached{false};
std::atomic<std::uint64_t> g_launches{0};

// Prefer a CUPTI the process already has (PyTorch's profiler links one): two copies would fight.
void* open_cupti() {
  static const char* loaded_names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
  for (const char* name : loaded_names) {
    if (void* h = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) return h;
  }
  if (const char* path = std::getenv(settings::cupti_library.variable)) {
    if (void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  static const char* paths[] = {"libcupti.so.13",
                                "libcupti.so",
                                "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
                                "/usr/local/cuda/lib64/libcupti.so.13",
                                "/usr/local/cuda/lib64/libcupti.so"};
  for (const char* path : paths) {
    if (void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

bool load(State& s) {
  if (s.load_tried) return s.loaded;
  s.load_tried = true;
  void* lib = open_cupti();
  if (!lib) {
    s.load_error = "libcupti not found (set NIMBLE_CUPTI_LIBRARY to its path)";
    return false;
  }
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(real_dlsym()(lib, name));
    return fn != nullptr;
  };
  Api& a = s.api;
  if (!sym(a.subscribe, "cuptiSubscribe") || !sym(a.unsubscribe, "cuptiUnsubscribe") ||
      !sym(a.enable_domain, "cuptiEnableDomain") ||
      !sym(a.register_callbacks, "cuptiActivityRegisterCallbacks") ||
      !sym(a.activity_enable, "cuptiActivityEnable") ||
      !sym(a.activity_disable, "cuptiActivityDisable") ||
      !sym(a.flush_all, "cuptiActivityFlushAll") ||
      !sym(a.next_record, "cuptiActivityGetNextRecord") ||
      !sym(a.result_string, "cuptiGetResultString")) {
    s.load_error = "libcupti lacks an expected entry point";
    return false;
  }
  sym(a.graph_node_id, "cuptiGetGraphNodeId");
  sym(a.graph_exec_id, "cuptiGetGraphExecId");
  sym(a.finalize, "cuptiFinalize");
  s.loaded = true;
  return true;
}

std::string describe(State& s, CUptiResult r) {
  const char* text = nullptr;
  if (s.api.result_string) s.api.result_string(r, &text);
  return text ? text : ("CUPTI error " + std::to_string(static_cast<int>(r)));
}

bool is_kernel_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return true;
    default:
      return false;
  }
}

void CUPTIAPI on_driver_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void* data) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !data) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite == CUPTI_API_EXIT) {
    if (g_detach_requested.exchange(false, std::memory_order_acq_rel)) {
      state().api.finalize();
      g_detached.store(true, std::memory_order_release);
    }
    return;
  }
  if (info->callbackSite != CUPTI_API_ENTER) return;
  t_correlation = info->correlationId;
  if (is_kernel_launch(cbid) && g_window_open.load(std::memory_order_relaxed)) {
    g_launches.fetch_add(1, std::memory_order_relaxed);
  }
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  State& s = state();
  if (buffer && valid > 0 && s.api.next_record) {
    std::lock_guard<std::mutex> lock(s.mu);
    CUpti_Activity* record = nullptr;
    while (s.api.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
          if (k->graphNodeId != 0) {
            // A node of a program graph: all nodes of a launch share its correlation id, so
            // their times are kept by (launch, node id) (graph_node_timing).
            if (k->correlationId >= s.first_correlation) ++s.graph_kernel_records;
            if (s.graph_timings.size() < 3) {
              debug_message("CUPTI graph kernel record: correlation " + std::to_string(k->correlationId) + ", graph " +
                            std::to_string(k->graphId) + ", node " + std::to_string(k->graphNodeId));
            }
            s.graph_timings[{k->correlationId, k->graphNodeId}] = {k->start, k->end};
            break;
          }
          s.timings[k->correlationId] = {k->start, k->end};
          if (k->correlationId >= s.first_correlation) ++s.kernel_records;
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
          s.timings[m->correlationId] = {m->start, m->end};
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
          s.timings[m->correlationId] = {m->start, m->end};
          break;
        }
        default:
          break;
      }
    }
  }
  std::free(buffer);
}

}  // namespace

void clear_correlation() { t_correlation = 0; }

std::uint32_t take_correlation() {
  const std::uint32_t id = t_correlation;
  t_correlation = 0;
  return id;
}

// CUPTI may deliver buffers synchronously from any of its calls, and buffer_completed takes the
// state lock, so CUPTI is never called with the lock held. start/stop themselves run under
// the recorder's lock, one at a time.
bool start(std::string* why_not) {
  State& s = state();
  if (!load(s)) {
    if (why_not) *why_not = s.load_error;
    return false;
  }
  if (g_detached.load(std::memory_order_acquire) || g_detach_requested.load(std::memory_order_acquire)) {
    if (why_not) *why_not = "CUPTI was detached after the first window";
    return false;
  }
  const Api& a = s.api;
  if (!s.subscriber) {
    const CUptiResult r = a.subscribe(&s.subscriber, on_driver_call, nullptr);
    if (r != CUPTI_SUCCESS) {
      s.subscriber = nullptr;
      if (why_not) {
        *why_not = "cuptiSubscribe failed (" + describe(s, r) +
                   "); another CUPTI client such as a profiler may be active";
      }
      return false;
    }
  }
  a.enable_domain(1, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  if (!s.callbacks_registered) {
    if (a.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
      if (why_not) *why_not = "cuptiActivityRegisterCallbacks failed; no durations";
    } else {
      s.callbacks_registered = true;
    }
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.timings.clear();
    s.graph_timings.clear();
    s.kernel_records = 0;
    s.graph_kernel_records = 0;
    s.first_correlation = 0;
  }
  if (s.callbacks_registered) {
    for (CUpti_ActivityKind kind : kActivityKinds) a.activity_enable(kind);
  }
  g_launches.store(0, std::memory_order_relaxed);
  g_window_open.store(true, std::memory_order_relaxed);
  return true;
}

void restart_counts(std::uint32_t first_correlation, bool first_is_kernel) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.kernel_records = 0;
    s.graph_kernel_records = 0;
    s.first_correlation = first_correlation;
    // Records of earlier work (a window `nimble record` dropped, then the search for another)
    // are not this window's: dropping them keeps the maps to one window's size.
    if (first_correlation != 0) {
      std::erase_if(s.timings, [&](const auto& entry) { return entry.first < first_correlation; });
      s.graph_timings.erase(s.graph_timings.begin(), s.graph_timings.lower_bound({first_correlation, 0}));
    }
  }
  g_launches.store(first_is_kernel && first_correlation != 0 ? 1 : 0, std::memory_order_relaxed);
  g_window_open.store(true, std::memory_order_relaxed);
}

void stop(bool flush) {
  g_window_open.store(false, std::memory_order_relaxed);
  State& s = state();
  if (!s.loaded) return;
  const Api& a = s.api;
  if (flush && s.callbacks_registered) {
    // Activity records exist only for work that finished.
    if (auto sync = reinterpret_cast<PFN_cuCtxSynchronize_v2000>(resolve_real(HookId::k_cuCtxSynchronize))) {
      sync();
    }
    a.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  if (s.callbacks_registered) {
    for (CUpti_ActivityKind kind : kActivityKinds) a.activity_disable(kind);
  }
  if (!s.subscriber) return;
  if (flush && a.finalize) {
    // The subscriber stays until the next driver call returns, which detaches CUPTI; never
    // during exit-time teardown (cudart's own atexit handlers, registered earlier, run after
    // this one), when the driver may be going away.
    g_detach_requested.store(true, std::memory_order_release);
    std::atexit([] { g_detach_requested.store(false, std::memory_order_release); });
    return;
  }
  a.enable_domain(0, s.subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  a.unsubscribe(s.subscriber);
  s.subscriber = nullptr;
}

std::uint64_t kernel_launches() { return g_launches.load(std::memory_order_relaxed); }

std::uint64_t kernel_records() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.kernel_records;
}

std::uint64_t graph_kernel_records() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.graph_kernel_records;
}

std::optional<std::uint32_t> graph_exec_id(CUgraphExec exec) {
  if (!g_window_open.load(std::memory_order_relaxed)) return std::nullopt;
  State& s = state();
  std::uint32_t id = 0;
  if (!s.api.graph_exec_id || s.api.graph_exec_id(exec, &id) != CUPTI_SUCCESS) return std::nullopt;
  return id;
}

std::optional<std::uint64_t> graph_node_id(CUgraphNode node, std::uint32_t exec_id) {
  // After the window CUPTI is detached; asking it anything would attach it again.
  if (!g_window_open.load(std::memory_order_relaxed)) return std::nullopt;
  State& s = state();
  std::uint64_t id = 0;
  if (!s.api.graph_node_id || s.api.graph_node_id(node, &id) != CUPTI_SUCCESS) return std::nullopt;
  // The records name the node as the exec's copy of it: the exec's graph id in the high half,
  // the node's number within its graph in the low half (seen with CUDA 13.0, driver 580).
  return (std::uint64_t{exec_id} << 32) | (id & 0xffffffffu);
}

std::optional<Timing> graph_node_timing(std::uint32_t launch_correlation, std::uint64_t node_id) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  auto it = s.graph_timings.find({launch_correlation, node_id});
  if (it == s.graph_timings.end()) return std::nullopt;
  return it->second;
}

std::unordered_map<std::uint32_t, Timing> timings() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.timings;
}

}  // namespace nimble::hooks::cupti
