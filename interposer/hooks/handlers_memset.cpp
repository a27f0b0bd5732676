// Memsets: one "memset" task writing the destination range (pitched for the 2D forms).
#include "handlers.hpp"
#include "nimble/trace/recorded.hpp"
#include "kernel_info.hpp"
#include "recorder.hpp"
#include "signature.hpp"
#include "task_description.hpp"

namespace nimble::hooks {
namespace {

std::uint64_t extent(const Fill& f) {
  if (f.width == 0 || f.height == 0) return 0;
  return (f.height - 1) * f.pitch + f.width * f.element_size;
}

}  // namespace

void describe_fill(const Fill& f, deps::TaskEvent& event) {
  const std::uint64_t bytes = f.width * f.height * f.element_size;
  if (extent(f) > 0) event.accesses.push_back({f.dst, extent(f), deps::Access::Write, false});
  event.detail["memset"] = trace::to_json(trace::MemsetRecord{f.dst, bytes, f.element_size, f.value, f.pitch, f.width, f.height});
}

namespace {

template <class Call>
CUresult record_fill(const HookInfo& h, CUstream stream, const Fill& f, Call&& call) {
  const std::uint64_t bytes = f.width * f.height * f.element_size;
  return record_task({h, stream, trace::TaskKind::Memset, signature_of("memset", hash_string(h.base), bytes)},
                     call, [&](deps::TaskEvent& event) { describe_fill(f, event); },
                     [&]() -> std::optional<replayer::GpuCall> {
                       return replayer::MemsetCall{f.dst, static_cast<std::uint32_t>(f.value),
                                                   static_cast<unsigned>(f.element_size), f.width, f.height, f.pitch};
                     });
}

}  // namespace

template <class V>
CUresult on_memset_1d(H h, CUresult(CUDAAPI* real)(CUdeviceptr, V, size_t), CUdeviceptr dst,
                      V value, size_t count) {
  return record_fill(h, nullptr, {dst, sizeof(V), value, count, 1, 0},
                     [&] { return real(dst, value, count); });
}

template <class V>
CUresult on_memset_1d_async(H h, CUresult(CUDAAPI* real)(CUdeviceptr, V, size_t, CUstream),
                            CUdeviceptr dst, V value, size_t count, CUstream stream) {
  return record_fill(h, stream, {dst, sizeof(V), value, count, 1, 0},
                     [&] { return real(dst, value, count, stream); });
}

template <class V>
CUresult on_memset_2d(H h, CUresult(CUDAAPI* real)(CUdeviceptr, size_t, V, size_t, size_t),
                      CUdeviceptr dst, size_t pitch, V value, size_t width, size_t height) {
  return record_fill(h, nullptr, {dst, sizeof(V), value, width, height, pitch},
                     [&] { return real(dst, pitch, value, width, height); });
}

template <class V>
CUresult on_memset_2d_async(H h,
                            CUresult(CUDAAPI* real)(CUdeviceptr, size_t, V, size_t, size_t,
                                                    CUstream),
                            CUdeviceptr dst, size_t pitch, V value, size_t width, size_t height,
                            CUstream stream) {
  return record_fill(h, stream, {dst, sizeof(V), value, width, height, pitch},
                     [&] { return real(dst, pitch, value, width, height, stream); });
}

#define NIMBLE_INSTANTIATE_MEMSET(V)                                                            \
  template CUresult on_memset_1d<V>(H, CUresult(CUDAAPI*)(CUdeviceptr, V, size_t), CUdeviceptr, \
                                    V, size_t);                                                 \
  template CUresult on_memset_1d_async<V>(H, CUresult(CUDAAPI*)(CUdeviceptr, V, size_t, CUstream), \
                                          CUdeviceptr, V, size_t, CUstream);                    \
  template CUresult on_memset_2d<V>(H, CUresult(CUDAAPI*)(CUdeviceptr, size_t, V, size_t, size_t), \
                                    CUdeviceptr, size_t, V, size_t, size_t);                    \
  template CUresult on_memset_2d_async<V>(                                                      \
      H, CUresult(CUDAAPI*)(CUdeviceptr, size_t, V, size_t, size_t, CUstream), CUdeviceptr,     \
      size_t, V, size_t, size_t, CUstream);
NIMBLE_INSTANTIATE_MEMSET(unsigned char)
NIMBLE_INSTANTIATE_MEMSET(unsigned short)
NIMBLE_INSTANTIATE_MEMSET(unsigned int)
#undef NIMBLE_INSTANTIATE_MEMSET

}  // namespace nimble::hooks
