// Copies: every cuMemcpy* form becomes one "memcpy" task that reads its device source range and
// writes its device destination range. Host memory is not tracked. A synchronous copy into
// host memory is also a host synchronisation.
#include "handlers.hpp"
#include "nimble/trace/recorded.hpp"
#include "kernel_info.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"
#include "signature.hpp"
#include "task_description.hpp"

namespace nimble::hooks {
namespace {

enum class Side { Host, Device, Array };

struct Endpoint {
  Side side = Side::Host;
  std::uint64_t addr = 0;   // start of the bytes touched
  std::uint64_t size = 0;   // extent of the bytes touched (pitched copies include the gaps)
};

struct Copy {
  Endpoint src, dst;
  std::uint64_t bytes = 0;  // payload
  std::optional<trace::CopyShape> shape;  // 2D/3D geometry, when there is one
};

const char* side_letter(Side s) { return s == Side::Host ? "H" : s == Side::Device ? "D" : "A"; }

// Unified addressing: ask the driver whether a pointer is device memory. Unregistered host
// memory makes the query fail, which also means host.
Side side_of_pointer(std::uint64_t ptr) {
  using GetAttr = CUresult(CUDAAPI*)(void*, CUpointer_attribute, CUdeviceptr);
  static auto get = driver_fn<GetAttr>("cuPointerGetAttribute", 4000);
  if (!get || ptr == 0) return Side::Host;
  unsigned int type = 0;
  if (get(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr) != CUDA_SUCCESS) return Side::Host;
  return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED ? Side::Device : Side::Host;
}

Endpoint linear(Side side, std::uint64_t addr, std::uint64_t size) { return {side, addr, size}; }

Side side_of_memory_type(CUmemorytype type, std::uint64_t device_ptr) {
  switch (type) {
    case CU_MEMORYTYPE_HOST: return Side::Host;
    case CU_MEMORYTYPE_DEVICE: return Side::Device;
    case CU_MEMORYTYPE_ARRAY: return Side::Array;
    case CU_MEMORYTYPE_UNIFIED: return side_of_pointer(device_ptr);
  }
  return Side::Host;
}

// Extent of a pitched region: from (x, y, z) over `depth` slices of `height` rows of `width` bytes.
std::uint64_t pitched_extent(std::uint64_t pitch, std::uint64_t slice_rows, std::uint64_t width,
                             std::uint64_t height, std::uint64_t depth) {
  if (width == 0 || height == 0 || depth == 0) return 0;
  return ((depth - 1) * slice_rows + (height - 1)) * pitch + width;
}

template <class D>  // CUDA_MEMCPY3D or CUDA_MEMCPY3D_PEER
Copy copy_3d(const D& c) {
  Copy copy;
  const Side ss = side_of_memory_type(c.srcMemoryType, c.srcDevice);
  const Side ds = side_of_memory_type(c.dstMemoryType, c.dstDevice);
  const std::uint64_t src_base = ss == Side::Host ? reinterpret_cast<std::uintptr_t>(c.srcHost) : c.srcDevice;
  const std::uint64_t dst_base = ds == Side::Host ? reinterpret_cast<std::uintptr_t>(c.dstHost) : c.dstDevice;
  copy.src = {ss, src_base + (c.srcZ * c.srcHeight + c.srcY) * c.srcPitch + c.srcXInBytes,
              pitched_extent(c.srcPitch, c.srcHeight, c.WidthInBytes, c.Height, c.Depth)};
  copy.dst = {ds, dst_base + (c.dstZ * c.dstHeight + c.dstY) * c.dstPitch + c.dstXInBytes,
              pitched_extent(c.dstPitch, c.dstHeight, c.WidthInBytes, c.Height, c.Depth)};
  copy.bytes = static_cast<std::uint64_t>(c.WidthInBytes) * c.Height * c.Depth;
  copy.shape = trace::CopyShape{c.WidthInBytes, c.Height, c.Depth, c.srcPitch, c.dstPitch};
  return copy;
}

Copy copy_2d(const CUDA_MEMCPY2D& c) {
  Copy copy;
  const Side ss = side_of_memory_type(c.srcMemoryType, c.srcDevice);
  const Side ds = side_of_memory_type(c.dstMemoryType, c.dstDevice);
  const std::uint64_t src_base = ss == Side::Host ? reinterpret_cast<std::uintptr_t>(c.srcHost) : c.srcDevice;
  const std::uint64_t dst_base = ds == Side::Host ? reinterpret_cast<std::uintptr_t>(c.dstHost) : c.dstDevice;
  copy.src = {ss, src_base + c.srcY * c.srcPitch + c.srcXInBytes,
              pitched_extent(c.srcPitch, 0, c.WidthInBytes, c.Height, 1)};
  copy.dst = {ds, dst_base + c.dstY * c.dstPitch + c.dstXInBytes,
              pitched_extent(c.dstPitch, 0, c.WidthInBytes, c.Height, 1)};
  copy.bytes = static_cast<std::uint64_t>(c.WidthInBytes) * c.Height;
  copy.shape = trace::CopyShape{c.WidthInBytes, c.Height, std::nullopt, c.srcPitch, c.dstPitch};
  return copy;
}

void add_access(deps::TaskEvent& event, const Endpoint& e, deps::Access mode) {
  // Host ends count too: under the memory ordering policy they keep two copies through one host
  // buffer in order (host and device addresses never overlap under unified addressing).
  if ((e.side == Side::Device || e.side == Side::Host) && e.size > 0) {
    event.accesses.push_back({e.addr, e.size, mode, false});
  } else if (e.side == Side::Array) {
    event.accesses.push_back({0, 0, deps::Access::ReadWrite, true});  // arrays are not tracked
  }
}

trace::CopyRecord copy_record(const Copy& c) {
  trace::CopyRecord r;
  r.direction = std::string(side_letter(c.src.side)) + "to" + side_letter(c.dst.side);
  r.bytes = c.bytes;
  r.src = c.src.addr;
  r.dst = c.dst.addr;
  r.shape = c.shape;
  return r;
}

void describe_copy(const Copy& c, deps::TaskEvent& event) {
  add_access(event, c.src, deps::Access::Read);
  add_access(event, c.dst, deps::Access::Write);
  event.detail["copy"] = trace::to_json(copy_record(c));
}

}  // namespace

void describe_copy_3d(const CUDA_MEMCPY3D& copy, deps::TaskEvent& event) { describe_copy(copy_3d(copy), event); }

namespace {

// A linear copy as `nimble run` compares it with the recording (2D/3D, array and host-to-host
// copies are not replayed).
std::optional<replayer::GpuCall> copy_call(const Copy& c) {
  if (c.shape || c.src.side == Side::Array || c.dst.side == Side::Array) return std::nullopt;
  replayer::CopyCall call;
  if (c.src.side == Side::Host && c.dst.side == Side::Device) {
    call.direction = replayer::CopyDirection::HtoD;
  } else if (c.src.side == Side::Device && c.dst.side == Side::Host) {
    call.direction = replayer::CopyDirection::DtoH;
  } else if (c.src.side == Side::Device && c.dst.side == Side::Device) {
    call.direction = replayer::CopyDirection::DtoD;
  } else {
    return std::nullopt;
  }
  call.src = c.src.addr;
  call.dst = c.dst.addr;
  call.bytes = c.bytes;
  return call;
}

// `make_copy` runs only inside the window, or under `nimble run` (it may query pointer types).
template <class MakeCopy, class Call>
CUresult record_copy(const HookInfo& h, CUstream stream, std::uint64_t bytes, bool synchronous,
                     MakeCopy&& make_copy, Call&& call) {
  bool described = false, to_host = false;
  const CUresult r = record_task({h, stream, trace::TaskKind::Memcpy, signature_of("memcpy", hash_string(h.base), bytes)},
                                 call, [&](deps::TaskEvent& event) {
                                   const Copy c = make_copy();
                                   described = true;
                                   to_host = c.dst.side == Side::Host;
                                   describe_copy(c, event);
                                 },
                                 [&] { return copy_call(make_copy()); });
  // A synchronous copy into host memory returns only once it is complete: a host sync (and,
  // outside the window, a hint for the automatic capture range that an iteration may end here).
  if (r == CUDA_SUCCESS && synchronous && should_record()) {
    if (!described) to_host = make_copy().dst.side == Side::Host;
    if (to_host) submit_sync(h, SyncKind::Stream, reinterpret_cast<std::uintptr_t>(stream), h.stream);
  }
  return r;
}

Copy simple(Side src_side, std::uint64_t src, Side dst_side, std::uint64_t dst, std::uint64_t bytes) {
  return {linear(src_side, src, bytes), linear(dst_side, dst, bytes), bytes, std::nullopt};
}

std::uintptr_t host(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

CUresult on_memcpy_htod(H h, PFN_cuMemcpyHtoD_v3020 real, CUdeviceptr dst, const void* src,
                        size_t bytes) {
  return record_copy(h, nullptr, bytes, true,
                     [&] { return simple(Side::Host, host(src), Side::Device, dst, bytes); },
                     [&] { return real(dst, src, bytes); });
}

CUresult on_memcpy_dtoh(H h, PFN_cuMemcpyDtoH_v3020 real, void* dst, CUdeviceptr src, size_t bytes) {
  return record_copy(h, nullptr, bytes, true,
                     [&] { return simple(Side::Device, src, Side::Host, host(dst), bytes); },
                     [&] { return real(dst, src, bytes); });
}

CUresult on_memcpy_dtod(H h, PFN_cuMemcpyDtoD_v3020 real, CUdeviceptr dst, CUdeviceptr src,
                        size_t bytes) {
  return record_copy(h, nullptr, bytes, true,
                     [&] { return simple(Side::Device, src, Side::Device, dst, bytes); },
                     [&] { return real(dst, src, bytes); });
}

CUresult on_memcpy_htod_async(H h, PFN_cuMemcpyHtoDAsync_v3020 real, CUdeviceptr dst,
                              const void* src, size_t bytes, CUstream stream) {
  return record_copy(h, stream, bytes, false,
                     [&] { return simple(Side::Host, host(src), Side::Device, dst, bytes); },
                     [&] { return real(dst, src, bytes, stream); });
}

CUresult on_memcpy_dtoh_async(H h, PFN_cuMemcpyDtoHAsync_v3020 real, void* dst, CUdeviceptr src,
                              size_t bytes, CUstream stream) {
  return record_copy(h, stream, bytes, false,
                     [&] { return simple(Side::Device, src, Side::Host, host(dst), bytes); },
                     [&] { return real(dst, src, bytes, stream); });
}

CUresult on_memcpy_dtod_async(H h, PFN_cuMemcpyDtoDAsync_v3020 real, CUdeviceptr dst,
                              CUdeviceptr src, size_t bytes, CUstream stream) {
  return record_copy(h, stream, bytes, false,
                     [&] { return simple(Side::Device, src, Side::Device, dst, bytes); },
                     [&] { return real(dst, src, bytes, stream); });
}

CUresult on_memcpy(H h, PFN_cuMemcpy_v4000 real, CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
  return record_copy(h, nullptr, bytes, true,
                     [&] { return simple(side_of_pointer(src), src, side_of_pointer(dst), dst, bytes); },
                     [&] { return real(dst, src, bytes); });
}

CUresult on_memcpy_async(H h, PFN_cuMemcpyAsync_v4000 real, CUdeviceptr dst, CUdeviceptr src,
                         size_t bytes, CUstream stream) {
  return record_copy(h, stream, bytes, false,
                     [&] { return simple(side_of_pointer(src), src, side_of_pointer(dst), dst, bytes); },
                     [&] { return real(dst, src, bytes, stream); });
}

CUresult on_memcpy_peer(H h, PFN_cuMemcpyPeer_v4000 real, CUdeviceptr dst, CUcontext dst_ctx,
                        CUdeviceptr src, CUcontext src_ctx, size_t bytes) {
  return record_copy(h, nullptr, bytes, true,
                     [&] { return simple(Side::Device, src, Side::Device, dst, bytes); },
                     [&] { return real(dst, dst_ctx, src, src_ctx, bytes); });
}

CUresult on_memcpy_peer_async(H h, PFN_cuMemcpyPeerAsync_v4000 real, CUdeviceptr dst,
                              CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes,
                              CUstream stream) {
  return record_copy(h, stream, bytes, false,
                     [&] { return simple(Side::Device, src, Side::Device, dst, bytes); },
                     [&] { return real(dst, dst_ctx, src, src_ctx, bytes, stream); });
}

CUresult on_memcpy_2d(H h, PFN_cuMemcpy2D_v3020 real, const CUDA_MEMCPY2D* copy) {
  if (!copy) return real(copy);
  return record_copy(h, nullptr, copy->WidthInBytes * copy->Height, true,
                     [&] { return copy_2d(*copy); }, [&] { return real(copy); });
}

CUresult on_memcpy_2d_async(H h, PFN_cuMemcpy2DAsync_v3020 real, const CUDA_MEMCPY2D* copy,
                            CUstream stream) {
  if (!copy) return real(copy, stream);
  return record_copy(h, stream, copy->WidthInBytes * copy->Height, false,
                     [&] { return copy_2d(*copy); }, [&] { return real(copy, stream); });
}

CUresult on_memcpy_3d(H h, PFN_cuMemcpy3D_v3020 real, const CUDA_MEMCPY3D* copy) {
  if (!copy) return real(copy);
  return record_copy(h, nullptr, copy->WidthInBytes * copy->Height * copy->Depth, true,
                     [&] { return copy_3d(*copy); }, [&] { return real(copy); });
}

CUresult on_memcpy_3d_async(H h, PFN_cuMemcpy3DAsync_v3020 real, const CUDA_MEMCPY3D* copy,
                            CUstream stream) {
  if (!copy) return real(copy, stream);
  return record_copy(h, stream, copy->WidthInBytes * copy->Height * copy->Depth, false,
                     [&] { return copy_3d(*copy); }, [&] { return real(copy, stream); });
}

CUresult on_memcpy_3d_peer(H h, PFN_cuMemcpy3DPeer_v4000 real, const CUDA_MEMCPY3D_PEER* copy) {
  if (!copy) return real(copy);
  return record_copy(h, nullptr, copy->WidthInBytes * copy->Height * copy->Depth, true,
                     [&] { return copy_3d(*copy); }, [&] { return real(copy); });
}

CUresult on_memcpy_3d_peer_async(H h, PFN_cuMemcpy3DPeerAsync_v4000 real,
                                 const CUDA_MEMCPY3D_PEER* copy, CUstream stream) {
  if (!copy) return real(copy, stream);
  return record_copy(h, stream, copy->WidthInBytes * copy->Height * copy->Depth, false,
                     [&] { return copy_3d(*copy); }, [&] { return real(copy, stream); });
}

namespace {

// A batch is one task: the union of its copies' accesses.
template <class Call>
CUresult record_batch(const HookInfo& h, CUdeviceptr* dsts, CUdeviceptr* srcs, size_t* sizes,
                      size_t count, CUstream stream, Call&& call) {
  std::uint64_t total = 0;
  for (size_t i = 0; sizes && i < count; ++i) total += sizes[i];
  return record_task({h, stream, trace::TaskKind::Memcpy, signature_of("memcpy", hash_string(h.base), total, count)},
                     call, [&](deps::TaskEvent& event) {
                       trace::CopyRecord batch{"batch", 0, 0, total, std::nullopt, count, {}};
                       for (size_t i = 0; dsts && srcs && sizes && i < count; ++i) {
                         const Copy c = simple(side_of_pointer(srcs[i]), srcs[i],
                                               side_of_pointer(dsts[i]), dsts[i], sizes[i]);
                         add_access(event, c.src, deps::Access::Read);
                         add_access(event, c.dst, deps::Access::Write);
                         batch.copies.push_back(copy_record(c));
                       }
                       event.detail["copy"] = trace::to_json(batch);
                     });
}

}  // namespace

CUresult on_memcpy_batch_async_v1(H h, PFN_cuMemcpyBatchAsync_v12080 real, CUdeviceptr* dsts,
                                  CUdeviceptr* srcs, size_t* sizes, size_t count,
                                  CUmemcpyAttributes* attrs, size_t* attr_idxs, size_t num_attrs,
                                  size_t* fail_idx, CUstream stream) {
  return record_batch(h, dsts, srcs, sizes, count, stream, [&] {
    return real(dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, fail_idx, stream);
  });
}

CUresult on_memcpy_batch_async(H h, PFN_cuMemcpyBatchAsync_v13000 real, CUdeviceptr* dsts,
                               CUdeviceptr* srcs, size_t* sizes, size_t count,
                               CUmemcpyAttributes* attrs, size_t* attr_idxs, size_t num_attrs,
                               CUstream stream) {
  return record_batch(h, dsts, srcs, sizes, count, stream, [&] {
    return real(dsts, srcs, sizes, count, attrs, attr_idxs, num_attrs, stream);
  });
}

}  // namespace nimble::hooks
