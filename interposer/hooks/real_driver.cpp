#include "real_driver.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "settings/settings.hpp"

namespace nimble::hooks {
namespace {

std::atomic<void*> g_resolved[kHookCount];  // zero-initialised before any code runs

// A pointer into libnimble itself. A driver whose internal references go through the global
// scope would hand back nimble's own exports as "real" functions: calling those would loop.
bool is_own_address(void* p) {
  static const void* own_base = [] {
    Dl_info self{};
    return dladdr(reinterpret_cast<void*>(&resolve_real), &self) ? self.dli_fbase : nullptr;
  }();
  Dl_info info{};
  return p && dladdr(p, &info) && info.dli_fbase == own_base;
}

}  // namespace

NIMBLE_NO_ASAN DlsymFn real_dlsym() {
  // __atomic builtins rather than std::atomic, whose members would be separate (instrumented)
  // functions in a sanitized build; see NIMBLE_NO_ASAN.
  static DlsymFn cached = nullptr;
  DlsymFn fn = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
  if (fn) return fn;
  // dlvsym is not interposed, so this reaches glibc even though nimble exports dlsym.
  void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
  if (!p) p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
  fn = reinterpret_cast<DlsymFn>(p);
  __atomic_store_n(&cached, fn, __ATOMIC_RELEASE);
  return fn;
}

std::atomic<void*> g_libcuda{nullptr};

bool driver_in_use() { return g_libcuda.load(std::memory_order_acquire) != nullptr; }

void* libcuda_handle() {
  std::atomic<void*>& cached = g_libcuda;
  void* h = cached.load(std::memory_order_acquire);
  if (h) return h;
  // NIMBLE_LIBCUDA lets tests point at another driver library (e.g. the toolkit's stub).
  const char* override_path = std::getenv(settings::libcuda.variable);
  if (override_path && *override_path) {
    h = dlopen(override_path, RTLD_NOW | RTLD_LOCAL);
  } else {
    // Prefer the copy the program already loaded; loading a second driver would be fatal.
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  }
  if (h) cached.store(h, std::memory_order_release);
  return h;
}

PFN_cuGetProcAddress_v12000 real_get_proc_address() {
  static std::atomic<PFN_cuGetProcAddress_v12000> cached{nullptr};
  auto fn = cached.load(std::memory_order_acquire);
  if (fn) return fn;
  void* lib = libcuda_handle();
  DlsymFn sym = real_dlsym();
  if (!lib || !sym) return nullptr;
  fn = reinterpret_cast<PFN_cuGetProcAddress_v12000>(sym(lib, "cuGetProcAddress_v2"));
  if (fn) cached.store(fn, std::memory_order_release);
  return fn;
}

void* resolve_real(HookId id) {
  std::atomic<void*>& slot = g_resolved[static_cast<std::size_t>(id)];
  void* p = slot.load(std::memory_order_acquire);
  if (p) return p;
  const HookInfo& h = hook_info(id);
  void* lib = libcuda_handle();
  DlsymFn sym = real_dlsym();
  if (!lib || !sym) return nullptr;
  if (!h.funnel) {
    // Same version and flags as the variant: exactly what cuGetProcAddress hands the program.
    if (auto gpa = real_get_proc_address()) {
      const cuuint64_t flags = h.stream == StreamVariant::PerThread
                                   ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                   : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
      CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
      void* q = nullptr;
      if (gpa(h.base, &q, h.version, flags, &status) == CUDA_SUCCESS &&
          status == CU_GET_PROC_ADDRESS_SUCCESS && !is_own_address(q)) {
        p = q;
      }
    }
  }
  if (!p) p = sym(lib, h.symbol);
  if (is_own_address(p)) p = nullptr;
  if (p) slot.store(p, std::memory_order_release);
  return p;
}

CUresult missing_driver_result() {
  return libcuda_handle() ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_NOT_INITIALIZED;
}

void* driver_function(const char* name, int version) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, void*>();  // leaked: used at exit
  const std::string key = std::string(name) + "@" + std::to_string(version);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(key);
    if (it != cache->end()) return it->second;
  }
  void* p = nullptr;
  if (auto gpa = real_get_proc_address()) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (gpa(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS) {
      p = nullptr;
    }
  }
  if (is_own_address(p)) p = nullptr;
  if (!p && libcuda_handle() && real_dlsym()) p = real_dlsym()(libcuda_handle(), name);
  if (is_own_address(p)) p = nullptr;
  if (!p && !libcuda_handle()) return nullptr;  // no driver yet: try again later
  std::lock_guard<std::mutex> lock(mu);
  (*cache)[key] = p;
  return p;
}

}  // namespace nimble::hooks
