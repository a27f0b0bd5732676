// The funnel: how programs and libraries obtain driver entry points, and how nimble makes sure
// they get its wrappers. Three doors: exported cu* symbols (wrappers.cpp), dlsym of a hooked
// name from libcuda, and cuGetProcAddress (including the pointer for "cuGetProcAddress" itself).
#pragma once

#include <cstdint>

namespace nimble::hooks {

// What cuGetProcAddress should hand the program for (symbol, version, flags), given the
// pointer the driver returned: nimble's wrapper when the driver's choice is a variant nimble
// knows (verified by pointer), else the driver's pointer untouched.
void* redirect_proc_address(const char* symbol, void* driver_pointer, int cuda_version,
                            std::uint64_t flags);

struct FunnelStats {
  std::uint64_t proc_address_wrapped = 0;
  std::uint64_t proc_address_passed = 0;     // hooked name, but a variant nimble does not know
  std::uint64_t dlsym_wrapped = 0;
};
FunnelStats funnel_stats();

}  // namespace nimble::hooks
