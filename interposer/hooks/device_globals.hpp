// Memory a kernel can touch without it appearing in its arguments: module and library globals
// (__device__ variables, seen through cuModuleGetGlobal / cuLibraryGetGlobal) and TMA tensor
// maps (CUtensorMap arguments encode their global address opaquely; cuTensorMapEncode* tells
// nimble which address a descriptor stands for).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <vector>

#include "deps/engine.hpp"
#include "kernel_info.hpp"

namespace nimble::hooks {

// Returns true the first time this global is seen (it should then be registered as an allocation).
bool note_module_global(CUmodule module, std::uint64_t addr, std::uint64_t size);
bool note_library_global(CUlibrary library, std::uint64_t addr, std::uint64_t size);

// Read-write accesses to every global known for the kernel's module or library.
std::vector<deps::MemAccess> global_accesses(const KernelInfo& kernel);

// Remembers what a tensor-map descriptor points at.
void note_tensor_map(const CUtensorMap* map, std::uint64_t addr, std::uint64_t size);

// Accesses for parameters whose bytes are a known tensor map (128 bytes, 64-byte aligned).
std::vector<deps::MemAccess> tensor_map_accesses(const std::vector<std::uint8_t>& args,
                                                 const std::vector<deps::ParamLayout>& params);

}  // namespace nimble::hooks
