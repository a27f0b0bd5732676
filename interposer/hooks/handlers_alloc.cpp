// Allocations: tracked for the whole run (not only inside the window) so that pointers in kernel
// arguments resolve to allocations. Nothing here is a task.
#include <mutex>

#include "device_globals.hpp"
#include "handlers.hpp"
#include "mapped_ranges.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

std::uint64_t as_u64(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

void allocated(std::uint64_t addr, std::uint64_t size, deps::AllocKind kind,
               deps::StreamHandle stream = deps::kLegacyStream) {
  try {
    engine().allocated(addr, size, kind, stream);
  } catch (...) {
    log_message("could not track an allocation; dependencies may be missing");
  }
}

void freed(std::uint64_t addr, deps::StreamHandle stream = deps::kLegacyStream) {
  try {
    engine().freed(addr, stream);
  } catch (...) {
    log_message("could not track a free; dependencies may be missing");
  }
}

// Whether a stream-ordered allocation belongs to the program's own graph capture.
bool skip_stream(const HookInfo& h, CUstream stream) {
  return !should_record() || program_capturing(stream, h.stream);
}

struct Mapped {
  std::mutex mu;
  MappedRanges ranges;
};
Mapped& mapped() {
  static Mapped* m = new Mapped();
  return *m;
}

void apply(const std::vector<MappedRanges::Change>& changes) {
  for (const auto& c : changes) {
    if (c.allocate) {
      allocated(c.addr, c.size, deps::AllocKind::Mapped);
    } else {
      freed(c.addr);
    }
  }
}

}  // namespace

CUresult on_mem_alloc(H, PFN_cuMemAlloc_v3020 real, CUdeviceptr* dptr, size_t bytes) {
  const CUresult r = real(dptr, bytes);
  if (r == CUDA_SUCCESS && dptr && should_record()) allocated(*dptr, bytes, deps::AllocKind::Device);
  return r;
}

CUresult on_mem_alloc_pitch(H, PFN_cuMemAllocPitch_v3020 real, CUdeviceptr* dptr, size_t* pitch,
                            size_t width, size_t height, unsigned element_size) {
  const CUresult r = real(dptr, pitch, width, height, element_size);
  if (r == CUDA_SUCCESS && dptr && pitch && should_record()) {
    allocated(*dptr, *pitch * height, deps::AllocKind::Device);
  }
  return r;
}

CUresult on_mem_free(H, PFN_cuMemFree_v3020 real, CUdeviceptr dptr) {
  if (running()) short_circuit_host_visible("freed memory");
  const CUresult r = real(dptr);
  if (r == CUDA_SUCCESS && dptr && should_record()) freed(dptr);
  return r;
}

CUresult on_mem_alloc_async(H h, PFN_cuMemAllocAsync_v11020 real, CUdeviceptr* dptr, size_t bytes,
                            CUstream stream) {
  if (skip_stream(h, stream)) return real(dptr, bytes, stream);
  const CUresult r = real(dptr, bytes, stream);
  if (r == CUDA_SUCCESS && dptr) allocated(*dptr, bytes, deps::AllocKind::Async, map_stream(stream, h.stream));
  return r;
}

CUresult on_mem_alloc_from_pool_async(H h, PFN_cuMemAllocFromPoolAsync_v11020 real,
                                      CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool,
                                      CUstream stream) {
  if (skip_stream(h, stream)) return real(dptr, bytes, pool, stream);
  const CUresult r = real(dptr, bytes, pool, stream);
  if (r == CUDA_SUCCESS && dptr) allocated(*dptr, bytes, deps::AllocKind::Async, map_stream(stream, h.stream));
  return r;
}

CUresult on_mem_free_async(H h, PFN_cuMemFreeAsync_v11020 real, CUdeviceptr dptr, CUstream stream) {
  // Under nimble run, kept until the held-back calls that may use the memory are on the GPU.
  if (running() && !inside_nimble() && !program_capturing(stream, h.stream) &&
      short_circuit_holds_free(real, dptr, stream, h.stream)) {
    return CUDA_SUCCESS;
  }
  if (skip_stream(h, stream)) return real(dptr, stream);
  const CUresult r = real(dptr, stream);
  if (r == CUDA_SUCCESS && dptr) freed(dptr, map_stream(stream, h.stream));
  return r;
}

CUresult on_mem_alloc_managed(H, PFN_cuMemAllocManaged_v6000 real, CUdeviceptr* dptr,
                              size_t bytes, unsigned flags) {
  const CUresult r = real(dptr, bytes, flags);
  if (r == CUDA_SUCCESS && dptr && should_record()) allocated(*dptr, bytes, deps::AllocKind::Managed);
  return r;
}

// Pinned host memory is device-accessible under unified addressing: kernels may take it as an
// argument, so it is registered (as kind Host) for pointer resolution.
CUresult on_mem_host_alloc(H, PFN_cuMemHostAlloc_v2020 real, void** pp, size_t bytes,
                           unsigned flags) {
  const CUresult r = real(pp, bytes, flags);
  if (r == CUDA_SUCCESS && pp && *pp && should_record()) allocated(as_u64(*pp), bytes, deps::AllocKind::Host);
  return r;
}

CUresult on_mem_alloc_host(H, PFN_cuMemAllocHost_v3020 real, void** pp, size_t bytes) {
  const CUresult r = real(pp, bytes);
  if (r == CUDA_SUCCESS && pp && *pp && should_record()) allocated(as_u64(*pp), bytes, deps::AllocKind::Host);
  return r;
}

CUresult on_mem_free_host(H, PFN_cuMemFreeHost_v2000 real, void* p) {
  if (running()) short_circuit_host_visible("freed memory");
  const CUresult r = real(p);
  if (r == CUDA_SUCCESS && p && should_record()) freed(as_u64(p));
  return r;
}

// Reserving address space maps nothing yet; mappings become allocations (mapped_ranges.hpp).
CUresult on_mem_address_reserve(H, PFN_cuMemAddressReserve_v10020 real, CUdeviceptr* ptr,
                                size_t size, size_t alignment, CUdeviceptr addr,
                                unsigned long long flags) {
  return real(ptr, size, alignment, addr, flags);
}

CUresult on_mem_address_free(H, PFN_cuMemAddressFree_v10020 real, CUdeviceptr ptr, size_t size) {
  if (running()) short_circuit_host_visible("freed memory");
  const CUresult r = real(ptr, size);
  if (r == CUDA_SUCCESS && should_record()) {
    std::lock_guard<std::mutex> lock(mapped().mu);
    apply(mapped().ranges.unmap(ptr, size));  // anything still mapped there is gone too
  }
  return r;
}

CUresult on_mem_map(H, PFN_cuMemMap_v10020 real, CUdeviceptr ptr, size_t size, size_t offset,
                    CUmemGenericAllocationHandle handle, unsigned long long flags) {
  const CUresult r = real(ptr, size, offset, handle, flags);
  if (r == CUDA_SUCCESS && should_record()) {
    std::lock_guard<std::mutex> lock(mapped().mu);
    apply(mapped().ranges.map(ptr, size));
  }
  return r;
}

CUresult on_mem_unmap(H, PFN_cuMemUnmap_v10020 real, CUdeviceptr ptr, size_t size) {
  if (running()) short_circuit_host_visible("freed memory");
  const CUresult r = real(ptr, size);
  if (r == CUDA_SUCCESS && should_record()) {
    std::lock_guard<std::mutex> lock(mapped().mu);
    apply(mapped().ranges.unmap(ptr, size));
  }
  return r;
}

CUresult on_module_get_global(H, PFN_cuModuleGetGlobal_v3020 real, CUdeviceptr* dptr,
                              size_t* bytes, CUmodule module, const char* name) {
  CUdeviceptr local_ptr = 0;
  size_t local_size = 0;
  // The program may pass null for either output; nimble needs both.
  const CUresult r = real(dptr ? dptr : &local_ptr, bytes ? bytes : &local_size, module, name);
  if (r == CUDA_SUCCESS && should_record()) {
    const CUdeviceptr p = dptr ? *dptr : local_ptr;
    const size_t n = bytes ? *bytes : local_size;
    if (p && note_module_global(module, p, n)) allocated(p, n, deps::AllocKind::ModuleGlobal);
  }
  return r;
}

CUresult on_library_get_global(H, PFN_cuLibraryGetGlobal_v12000 real, CUdeviceptr* dptr,
                               size_t* bytes, CUlibrary library, const char* name) {
  CUdeviceptr local_ptr = 0;
  size_t local_size = 0;
  const CUresult r = real(dptr ? dptr : &local_ptr, bytes ? bytes : &local_size, library, name);
  if (r == CUDA_SUCCESS && should_record()) {
    const CUdeviceptr p = dptr ? *dptr : local_ptr;
    const size_t n = bytes ? *bytes : local_size;
    if (p && note_library_global(library, p, n)) allocated(p, n, deps::AllocKind::ModuleGlobal);
  }
  return r;
}

namespace {

// Bytes a tensor map can reach: the outermost stride times the outermost dimension.
std::uint64_t tensor_extent(CUtensorMapDataType type, cuuint32_t rank, const cuuint64_t* dims,
                            const cuuint64_t* strides) {
  if (!dims || rank == 0) return 0;
  if (rank == 1 || !strides) {
    static const std::uint64_t sizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};  // CUtensorMapDataType order
    const std::uint64_t element = static_cast<unsigned>(type) < 13 ? sizes[type] : 8;
    std::uint64_t n = element;
    for (cuuint32_t i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
  return strides[rank - 2] * dims[rank - 1];
}

}  // namespace

CUresult on_tensor_map_encode_tiled(H, PFN_cuTensorMapEncodeTiled_v12000 real, CUtensorMap* map,
                                    CUtensorMapDataType type, cuuint32_t rank, void* address,
                                    const cuuint64_t* dims, const cuuint64_t* strides,
                                    const cuuint32_t* box, const cuuint32_t* element_strides,
                                    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  const CUresult r = real(map, type, rank, address, dims, strides, box, element_strides,
                          interleave, swizzle, l2, oob);
  if (r == CUDA_SUCCESS && should_record()) {
    note_tensor_map(map, as_u64(address), tensor_extent(type, rank, dims, strides));
  }
  return r;
}

CUresult on_tensor_map_encode_im2col(H, PFN_cuTensorMapEncodeIm2col_v12000 real,
                                     CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                     void* address, const cuuint64_t* dims,
                                     const cuuint64_t* strides, const int* lower,
                                     const int* upper, cuuint32_t channels, cuuint32_t pixels,
                                     const cuuint32_t* element_strides,
                                     CUtensorMapInterleave interleave,
                                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                     CUtensorMapFloatOOBfill oob) {
  const CUresult r = real(map, type, rank, address, dims, strides, lower, upper, channels, pixels,
                          element_strides, interleave, swizzle, l2, oob);
  if (r == CUDA_SUCCESS && should_record()) {
    note_tensor_map(map, as_u64(address), tensor_extent(type, rank, dims, strides));
  }
  return r;
}

}  // namespace nimble::hooks
