#include "funnel.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <string>

#include "handlers.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

std::atomic<std::uint64_t> g_wrapped{0}, g_passed{0}, g_dlsym_wrapped{0};

bool from_libcuda(void* p) {
  Dl_info info{};
  if (!dladdr(p, &info) || !info.dli_fname) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  const char* base = slash ? slash + 1 : info.dli_fname;
  if (std::strncmp(base, "libcuda.so", 10) == 0) return true;
  // NIMBLE_LIBCUDA (tests) may name a driver library with another file name.
  struct link_map* map = nullptr;
  void* lib = libcuda_handle();
  return lib && dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
         std::strcmp(map->l_name, info.dli_fname) == 0;
}

// Profiling libraries (CUPTI, loaded by nimble itself or by PyTorch's profiler) get the real
// driver: their own driver calls are not the program's tasks, and they may make them from
// their worker threads while nimble is busy flushing them.
bool exempt_caller(const void* return_address) {
  Dl_info info{};
  if (!dladdr(return_address, &info) || !info.dli_fname) return false;
  const char* slash = std::strrchr(info.dli_fname, '/');
  const char* base = slash ? slash + 1 : info.dli_fname;
  return std::strncmp(base, "libcupti", 8) == 0 || std::strncmp(base, "libnvperf", 9) == 0;
}

// The handle-based (or RTLD_DEFAULT) lookup of a hooked symbol: swap libcuda's function for
// nimble's wrapper of the same variant.
void* lookup_hooked(void* handle, const char* name, const HookInfo& hook) {
  void* p = real_dlsym()(handle, name);
  if (!p) return p;
  void* wrapper = wrapper_address(hook.id);
  if (p == wrapper) return p;
  if (!from_libcuda(p)) return p;  // some other library's function of the same name
  g_dlsym_wrapped.fetch_add(1, std::memory_order_relaxed);
  return wrapper;
}

}  // namespace

void* redirect_proc_address(const char* symbol, void* driver_pointer, int cuda_version,
                            std::uint64_t flags) {
  if (!symbol || !driver_pointer) return driver_pointer;
  const HookInfo* variant = select_variant(symbol, cuda_version, flags);
  if (!variant) return driver_pointer;
  if (variant->funnel) {
    // Always nimble's own cuGetProcAddress, so everything resolved through it is seen too.
    g_wrapped.fetch_add(1, std::memory_order_relaxed);
    return wrapper_address(variant->id);
  }
  // Hand out the wrapper only if the driver picked exactly the variant nimble wraps; a newer
  // variant nimble does not know (a later driver) passes through untouched.
  void* lib = libcuda_handle();
  if (resolve_real(variant->id) == driver_pointer ||
      (lib && real_dlsym()(lib, variant->symbol) == driver_pointer)) {
    g_wrapped.fetch_add(1, std::memory_order_relaxed);
    return wrapper_address(variant->id);
  }
  g_passed.fetch_add(1, std::memory_order_relaxed);
  debug_message(std::string("cuGetProcAddress(\"") + symbol + "\", " + std::to_string(cuda_version) +
                ", " + std::to_string(flags) + ") returned a variant nimble does not wrap; passed through");
  return driver_pointer;
}

FunnelStats funnel_stats() {
  return {g_wrapped.load(), g_passed.load(), g_dlsym_wrapped.load()};
}

CUresult on_get_proc_address_v1(H, PFN_cuGetProcAddress_v11030 real, const char* symbol,
                                void** pfn, int version, cuuint64_t flags) {
  const CUresult r = real(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = redirect_proc_address(symbol, *pfn, version, flags);
  return r;
}

CUresult on_get_proc_address_v2(H, PFN_cuGetProcAddress_v12000 real, const char* symbol,
                                void** pfn, int version, cuuint64_t flags,
                                CUdriverProcAddressQueryResult* status) {
  const CUresult r = real(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && pfn && *pfn) *pfn = redirect_proc_address(symbol, *pfn, version, flags);
  return r;
}

}  // namespace nimble::hooks

// Exact-name dlsym hook. Every other name is a tail call into glibc's dlsym, so the caller's
// identity (which RTLD_NEXT and the local scope of RTLD_DEFAULT depend on) is preserved.
// RTLD_NEXT look-ups of hooked names are passed through too: they come from other
// interposers, which want the next definition after themselves.
// Not instrumented by ASan (NIMBLE_NO_ASAN, real_driver.hpp): ASan's runtime calls it before its
// shadow memory exists, and its stack redzones would also defeat the tail call.
extern "C" __attribute__((visibility("default"))) NIMBLE_NO_ASAN void* dlsym(void* handle, const char* name) {
  using namespace nimble::hooks;
  // glibc declares `name` non-null; launder it so the null check survives optimisation.
  const char* n = name;
  asm("" : "+r"(n));
  if (n && n[0] == 'c' && n[1] == 'u' && handle != RTLD_NEXT) {
    if (const HookInfo* hook = find_hook_by_symbol(n)) {
      if (!exempt_caller(__builtin_return_address(0))) return lookup_hooked(handle, n, *hook);
    }
  }
  return real_dlsym()(handle, name);
}
