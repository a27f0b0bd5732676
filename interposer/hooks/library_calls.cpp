// Library attribution: cuBLAS / cuBLASLt / cuDNN entry points interposed as exported symbols.
// They work for callers that resolve these names through the global scope (ordinary dynamic
// linking, e.g. libtorch_cuda's PLT calls); a library that dlsym()s them from a handle, or links
// them statically, bypasses this and its tasks get "library_call": null (docs/recording.md).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cudnn.h>
#pragma GCC diagnostic pop
#include <dlfcn.h>

#include <atomic>

#include "host_timing.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

enum class Library { cublas, cublasLt, cudnn };

struct LibraryInfo {
  const char* sonames[4];
  int missing_status;  // returned when the library cannot be found (its NOT_INITIALIZED)
};

constexpr LibraryInfo kLibraries[] = {
    {{"libcublas.so.13", "libcublas.so.12", "libcublas.so", nullptr}, CUBLAS_STATUS_NOT_INITIALIZED},
    {{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so", nullptr}, CUBLAS_STATUS_NOT_INITIALIZED},
    {{"libcudnn.so.9", "libcudnn.so", nullptr, nullptr}, CUDNN_STATUS_NOT_INITIALIZED},
};

enum class LibraryHookId : unsigned {
#define NIMBLE_LIBRARY_HOOK(library, symbol) k_##symbol,
#include "library_calls.def"
  count
};

struct LibraryHookInfo {
  Library library;
  const char* symbol;
};

constexpr LibraryHookInfo kLibraryHooks[] = {
#define NIMBLE_LIBRARY_HOOK(library, symbol) {Library::library, #symbol},
#include "library_calls.def"
};

thread_local const char* t_library_call = nullptr;
std::atomic<void*> g_library_real[static_cast<unsigned>(LibraryHookId::count)];

// The library's own function: from the already-loaded library (it may be in a local scope that
// RTLD_NEXT cannot see), else the next definition after nimble.
void* resolve_library_real(LibraryHookId id, void* own_wrapper) {
  auto& slot = g_library_real[static_cast<unsigned>(id)];
  void* p = slot.load(std::memory_order_acquire);
  if (p) return p;
  const LibraryHookInfo& hook = kLibraryHooks[static_cast<unsigned>(id)];
  const LibraryInfo& lib = kLibraries[static_cast<unsigned>(hook.library)];
  for (const char* soname : lib.sonames) {
    if (!soname) break;
    if (void* handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) {
      p = real_dlsym()(handle, hook.symbol);
      dlclose(handle);  // drops only the reference NOLOAD added
      if (p && p != own_wrapper) break;
      p = nullptr;
    }
  }
  if (!p) p = real_dlsym()(RTLD_NEXT, hook.symbol);
  if (p == own_wrapper) p = nullptr;
  if (p) slot.store(p, std::memory_order_release);
  return p;
}

// Marks this thread as inside a library call; the outermost call wins when they nest
// (cublasSgemm_v2 calling cublasLtMatmul stays "cublasSgemm_v2").
class LibraryCallScope {
 public:
  explicit LibraryCallScope(const char* name) : outer_(t_library_call) {
    if (!outer_) t_library_call = name;
  }
  ~LibraryCallScope() { t_library_call = outer_; }

 private:
  const char* outer_;
};

template <LibraryHookId Id, class Fn>
struct LibraryHook;

template <LibraryHookId Id, class R, class... A>
struct LibraryHook<Id, R (*)(A...)> {
  static R wrapper(A... args) {
    if (__builtin_expect(host_timing(), 0)) {
      HostTimer timer(kHookCount + static_cast<std::size_t>(Id));
      return dispatch(args...);
    }
    return dispatch(args...);
  }

  __attribute__((always_inline)) static R dispatch(A... args) {
    using Fn = R (*)(A...);
    const auto real = reinterpret_cast<Fn>(
        resolve_library_real(Id, reinterpret_cast<void*>(&wrapper)));
    const LibraryHookInfo& hook = kLibraryHooks[static_cast<unsigned>(Id)];
    if (!real) return static_cast<R>(kLibraries[static_cast<unsigned>(hook.library)].missing_status);
    if (!recording()) return real(args...);
    LibraryCallScope scope(hook.symbol);
    return real(args...);
  }
};

}  // namespace

const char* current_library_call() { return t_library_call; }

std::size_t library_hook_count() { return static_cast<std::size_t>(LibraryHookId::count); }

const char* library_hook_name(std::size_t index) {
  return index < library_hook_count() ? kLibraryHooks[index].symbol : "?";
}

// The C signatures of names cublas_api.h also overloads in C++ (with a cudaDataType compute type).
using CublasGemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                          int, int, int, const void*, const void*, cudaDataType,
                                          int, const void*, cudaDataType, int, const void*, void*,
                                          cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void* const[], cudaDataType, int, const void* const[], cudaDataType, int, const void*,
    void* const[], cudaDataType, int, int, cublasComputeType_t, cublasGemmAlgo_t);
using CublasGemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*,
    cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t);

}  // namespace nimble::hooks

#define NIMBLE_LIBRARY_EXPORT(symbol, type)                                                   \
  extern "C" __attribute__((visibility("hidden"), used)) constinit const type                 \
      nimble_entry_##symbol =                                                                 \
          &nimble::hooks::LibraryHook<nimble::hooks::LibraryHookId::k_##symbol, type>::wrapper; \
  static_assert(sizeof(static_cast<type>(&::symbol)) > 0, "signature of " #symbol);            \
  asm(".pushsection .text\n"                                                                  \
      ".globl " #symbol "\n"                                                                  \
      ".type " #symbol ", @function\n"                                                        \
      ".p2align 4\n" #symbol ":\n"                                                           \
      "  endbr64\n"                                                                           \
      "  jmp *nimble_entry_" #symbol "(%rip)\n"                                               \
      ".size " #symbol ", .-" #symbol "\n"                                                    \
      ".popsection\n");
#define NIMBLE_LIBRARY_HOOK(library, symbol) NIMBLE_LIBRARY_EXPORT(symbol, decltype(&::symbol))
#define NIMBLE_LIBRARY_HOOK_TYPED(library, symbol, type) \
  NIMBLE_LIBRARY_EXPORT(symbol, nimble::hooks::type)
#include "library_calls.def"
#undef NIMBLE_LIBRARY_EXPORT
