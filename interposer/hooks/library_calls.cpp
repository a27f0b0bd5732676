// Library attribution: cuBLAS / cuBLASLt / cuDNN entry points interposed as exported symbols.
// They work for callers that resolve these names through the global scope (ordinary dynamic
// linking, e.g. libtorch_cuda's PLT calls); a library that dlsym()s them from a handle, or links
// them statically, bypasses this and its tasks get "library_call": null (docs/recording.md).
#include <dlfcn.h>

#include <atomic>
#include <chrono>

#include "host_timing.hpp"
#include "library_calls.hpp"
#include "library_keys.hpp"
#include "library_queries.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

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

// What a hook does beside labelling tasks (library_calls.def).
enum class Kind { Plain, Replayable, Followed, Remembered };
template <LibraryHookId Id>
struct Behaviour {
  static constexpr Kind kind = Kind::Plain;
};
#define NIMBLE_LIBRARY_HOOK(library, symbol)
#define NIMBLE_LIBRARY_REPLAYABLE(library, symbol)                                   \
  template <>                                                                        \
  struct Behaviour<LibraryHookId::k_##symbol> {                                      \
    static constexpr Kind kind = Kind::Replayable;                                   \
    template <class... A>                                                            \
    static std::optional<std::uint64_t> key(A... a) { return key_##symbol(a...); } \
  };
#define NIMBLE_LIBRARY_FOLLOWED(library, symbol)          \
  template <>                                             \
  struct Behaviour<LibraryHookId::k_##symbol> {           \
    static constexpr Kind kind = Kind::Followed;          \
    template <class... A>                                 \
    static void after(A... a) { after_##symbol(a...); }   \
  };
#define NIMBLE_LIBRARY_REMEMBERED(library, symbol)                                      \
  template <>                                                                           \
  struct Behaviour<LibraryHookId::k_##symbol> {                                         \
    static constexpr Kind kind = Kind::Remembered;                                      \
    template <class F, class... A>                                                      \
    static auto call(F real, A... a) { return remembered_##symbol(real, a...); }       \
  };
#include "library_calls.def"

std::atomic<std::int64_t> g_next_call_id{0};
std::atomic<void*> g_library_real[static_cast<unsigned>(LibraryHookId::count)];

void* find_in_library(Library library, const char* name, const void* own_wrapper) {
  const LibraryInfo& lib = kLibraries[static_cast<unsigned>(library)];
  for (const char* soname : lib.sonames) {
    if (!soname) break;
    if (void* handle = dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) {
      void* p = real_dlsym()(handle, name);
      dlclose(handle);  // drops only the reference NOLOAD added
      if (p && p != own_wrapper) return p;
    }
  }
  return nullptr;
}

// The library's own function: from the already-loaded library (it may be in a local scope that
// RTLD_NEXT cannot see), else the next definition after nimble.
void* resolve_library_real(LibraryHookId id, void* own_wrapper) {
  auto& slot = g_library_real[static_cast<unsigned>(id)];
  void* p = slot.load(std::memory_order_acquire);
  if (p) return p;
  const LibraryHookInfo& hook = kLibraryHooks[static_cast<unsigned>(id)];
  p = find_in_library(hook.library, hook.symbol, own_wrapper);
  if (!p) p = real_dlsym()(RTLD_NEXT, hook.symbol);
  if (p == own_wrapper) p = nullptr;
  if (p) slot.store(p, std::memory_order_release);
  return p;
}

// Marks this thread as inside a library call; the outermost call wins when they nest
// (cublasSgemm_v2 calling cublasLtMatmul stays "cublasSgemm_v2"). The program's own calls are
// numbered while tasks are recorded, so the trace tells which tasks one call issued.
class LibraryCallScope {
 public:
  explicit LibraryCallScope(const char* symbol) : outermost_(t_call.symbol == nullptr && !inside_nimble()) {
    if (!outermost_) return;
    t_call.symbol = symbol;
    t_call.id = recording() && tasks_matter() ? g_next_call_id.fetch_add(1, std::memory_order_relaxed) : -1;
    t_call.key.reset();
  }
  ~LibraryCallScope() {
    if (outermost_) t_call = LibraryCall();
  }
  // A call the program made itself (not one a library makes inside another).
  bool outermost() const { return outermost_; }
  void set_key(std::optional<std::uint64_t> key) { t_call.key = key; }

 private:
  bool outermost_;
};

template <LibraryHookId Id, class Fn>
struct LibraryHook;

template <LibraryHookId Id, class R, class... A>
struct LibraryHook<Id, R (*)(A...)> {
  using Fn = R (*)(A...);
  using B = Behaviour<Id>;

  static R wrapper(A... args) {
    if (__builtin_expect(host_timing(), 0)) {
      HostTimer timer(kHookCount + static_cast<std::size_t>(Id));
      return dispatch(args...);
    }
    return dispatch(args...);
  }

  // The slot starts at this stub, so the hot path is one load (22 instructions a call fewer than
  // looking the function up each time); while the library cannot be found, every call returns its
  // NOT_INITIALIZED.
  static R resolve_then_call(A... args) {
    void* p = resolve_library_real(Id, reinterpret_cast<void*>(&wrapper));
    if (!p) return static_cast<R>(kLibraries[static_cast<unsigned>(kLibraryHooks[static_cast<unsigned>(Id)].library)].missing_status);
    real_fn.store(reinterpret_cast<Fn>(p), std::memory_order_relaxed);
    return dispatch(args...);
  }

  static constinit inline std::atomic<Fn> real_fn{&resolve_then_call};

  __attribute__((always_inline)) static R dispatch(A... args) {
    const Fn real = real_fn.load(std::memory_order_relaxed);
    const LibraryHookInfo& hook = kLibraryHooks[static_cast<unsigned>(Id)];
    if (__builtin_expect(!recording() && !running() && !guard_paused(), 1)) return real(args...);
    LibraryCallScope scope(hook.symbol);
    if constexpr (B::kind == Kind::Followed) {
      const R result = real(args...);
      if (scope.outermost() && result == R{}) B::after(args...);
      return result;
    } else if constexpr (B::kind == Kind::Remembered) {
      if (scope.outermost() && remembers_queries_now(running(), guard_paused(), config().run_skip_library)) {
        return B::call(real, args...);
      }
      return real(args...);
    } else if constexpr (B::kind == Kind::Replayable) {
      if (!scope.outermost()) return real(args...);
      // One of the program's calls for the process guard, skipped or not (record_task leaves its launches out).
      if (g_guard_counting.load(std::memory_order_relaxed) && !inside_nimble()) guard_counts_call();
      return replayable(real, scope, hook.symbol, args...);
    } else {
      return real(args...);
    }
  }

  // While recording, the key goes into the trace with the tasks; while replaying, the call may be
  // skipped (run_mode.hpp decides), or runs and is compared with what is known of its inputs.
  static R replayable(Fn real, LibraryCallScope& scope, const char* symbol, A... args) {
    // nimble run keeps recording state (and records again) while it replays: both may apply.
    std::optional<std::uint64_t> key;
    if (recording() && tasks_matter()) {
      key = B::key(args...);
      scope.set_key(key);
    }
    if (!library_call_may_be_taken(running(), run_engaged(), in_plain_phase())) return real(args...);
    if (!key) key = B::key(args...);
    if (!key) return real(args...);
    const LibraryTurn turn = library_call_begins(symbol, *key);
    if (turn.skip) return R{};  // CUDNN_STATUS_SUCCESS, CUBLAS_STATUS_SUCCESS
    if (!turn.observe) return real(args...);
    const auto start = std::chrono::steady_clock::now();
    const R result = real(args...);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
    library_call_ended(turn, result == R{}, static_cast<std::uint64_t>(ns.count()));
    return result;
  }
};

}  // namespace

constinit thread_local LibraryCall t_call;

void* library_function(Library library, const char* name) { return find_in_library(library, name, nullptr); }

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
#define NIMBLE_LIBRARY_REPLAYABLE(library, symbol) NIMBLE_LIBRARY_HOOK(library, symbol)
#define NIMBLE_LIBRARY_FOLLOWED(library, symbol) NIMBLE_LIBRARY_HOOK(library, symbol)
#define NIMBLE_LIBRARY_REMEMBERED(library, symbol) NIMBLE_LIBRARY_HOOK(library, symbol)
#define NIMBLE_LIBRARY_HOOK_TYPED(library, symbol, type) \
  NIMBLE_LIBRARY_EXPORT(symbol, nimble::hooks::type)
#include "library_calls.def"
#undef NIMBLE_LIBRARY_EXPORT
