// The hook table as data: one HookInfo per intercepted driver entry point (hook_table.def),
// and the two look-ups the funnel needs (by exported symbol, and the variant cuGetProcAddress
// would return for a name, a requested cudaVersion and its flags).
#pragma once

#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

// cudaTypedefs.h declares these only for the driver's own build (__CUDA_API_VERSION_INTERNAL);
// libcuda still exports them for programs built with CUDA 10.0. Redeclaring an identical
// typedef is harmless.
typedef CUresult(CUDAAPI* PFN_cuStreamBeginCapture_v10000)(CUstream hStream);
typedef CUresult(CUDAAPI* PFN_cuStreamBeginCapture_v10000_ptsz)(CUstream hStream);

namespace nimble::hooks {

// Which default stream a variant means by stream 0.
enum class StreamVariant : std::uint8_t { Legacy, PerThread };

// Enumerators are k_<symbol>: token pasting keeps cuda.h's renaming macros (cuGetProcAddress ->
// cuGetProcAddress_v2, ...) from rewriting the names.
enum class HookId : std::uint16_t {
#define NIMBLE_DRIVER_HOOK(symbol, ...) k_##symbol,
#include "hook_table.def"
};

inline constexpr std::size_t kHookCount = 0
#define NIMBLE_DRIVER_HOOK(...) +1
#include "hook_table.def"
    ;

struct HookInfo {
  HookId id;
  const char* symbol;   // exported name, e.g. "cuMemcpyHtoDAsync_v2_ptsz"
  const char* base;     // cuGetProcAddress name, e.g. "cuMemcpyHtoDAsync"
  int version;          // first cudaVersion that gets this variant
  StreamVariant stream;
  bool funnel;          // handler runs even when idle (cuGetProcAddress)
};

inline constexpr HookInfo kHooks[] = {
#define NIMBLE_DRIVER_HOOK(symbol, base, version, stream, pfn, handler) \
  {HookId::k_##symbol, #symbol, base, version, StreamVariant::stream, false},
#define NIMBLE_FUNNEL_HOOK(symbol, base, version, stream, pfn, handler) \
  {HookId::k_##symbol, #symbol, base, version, StreamVariant::stream, true},
#include "hook_table.def"
};
static_assert(sizeof(kHooks) / sizeof(kHooks[0]) == kHookCount);

constexpr const HookInfo& hook_info(HookId id) { return kHooks[static_cast<std::size_t>(id)]; }

// The entry whose exported symbol is `symbol`, or nullptr.
const HookInfo* find_hook_by_symbol(std::string_view symbol);

// True if some entry has this cuGetProcAddress name.
bool is_hooked_base(std::string_view base);

// The variant cuGetProcAddress(base, cuda_version, flags) selects: the newest one whose version
// is <= cuda_version, a per-thread one when flags has CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
// and the function has one. nullptr when the name is not hooked or the version predates it.
const HookInfo* select_variant(std::string_view base, int cuda_version, std::uint64_t flags);

// The wrapper nimble hands out for an entry (the exported symbol jumps to the same function).
void* wrapper_address(HookId id);

}  // namespace nimble::hooks
