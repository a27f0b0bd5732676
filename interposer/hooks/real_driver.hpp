// Finding the real driver: libcuda is opened lazily (never linked), the real dlsym is taken
// from glibc by version, and each hooked variant's real function is fetched the way the
// program itself would get it (the real cuGetProcAddress with the variant's version and flags).
#pragma once

#include <cuda.h>

#include "hook_table.hpp"

namespace nimble::hooks {

// For the dlsym path only, in sanitized builds (NIMBLE_SANITIZE): ASan's runtime resolves its
// interceptors with dlsym before it has mapped its shadow memory, and nimble's exported dlsym
// takes that call, so the code it runs must not be instrumented. Nothing in other builds.
#define NIMBLE_NO_ASAN __attribute__((no_sanitize_address))

// glibc's dlsym, bypassing nimble's own exported dlsym.
using DlsymFn = void* (*)(void*, const char*);
NIMBLE_NO_ASAN DlsymFn real_dlsym();

// libcuda.so.1 if the process has it (opened with RTLD_NOLOAD first), else nullptr.
void* libcuda_handle();

// True once a wrapper has found the driver (without trying to load it).
bool driver_in_use();

// The driver's own cuGetProcAddress_v2, or nullptr without a driver.
PFN_cuGetProcAddress_v12000 real_get_proc_address();

// The real function behind a hook (cached), or nullptr if the driver lacks it.
void* resolve_real(HookId id);

// What a wrapper returns when the real function cannot be found.
CUresult missing_driver_result();

// A driver function nimble calls for itself (names, parameter layouts, device name, ...),
// resolved once by cuGetProcAddress name and version; nullptr when unavailable.
void* driver_function(const char* name, int version);

template <class Pfn>
Pfn driver_fn(const char* name, int version) {
  return reinterpret_cast<Pfn>(driver_function(name, version));
}

}  // namespace nimble::hooks
