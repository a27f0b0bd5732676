// A fake cuDNN for CPU tests (built as libcudnn.so.9): just enough of the backend API for a probe
// to run convolution-like calls through it. cudnnBackendExecute launches the fake driver's "scale"
// kernel with the variant pack's two data pointers and a scalar, through cuLaunchKernel, as the
// real library launches its kernels. FAKE_CUDNN_HIDDEN_STATE=1: the scalar is a count of
// executions, state no argument shows (nimble must notice and never skip such a call).
// FAKE_CUDNN_FORK=1: the kernel runs on a stream of the library's own, ordered with the caller's by
// the library's event records and waits (as cuDNN does for some backward convolutions).
#include <cuda.h>
#include <cudnn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" CUfunction fake_driver_function(const char* which);

namespace {

struct Descriptor {
  cudnnBackendDescriptorType_t type;
  std::vector<void*> data_pointers;
  bool finalized = false;
};

struct Handle {
  cudaStream_t stream = nullptr;
};

std::atomic<int> g_executes{0};

}  // namespace

extern "C" {

int fake_cudnn_executes() { return g_executes.load(); }

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  *handle = reinterpret_cast<cudnnHandle_t>(new Handle());
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  delete reinterpret_cast<Handle*>(handle);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  reinterpret_cast<Handle*>(handle)->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* stream) {
  *stream = reinterpret_cast<Handle*>(handle)->stream;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* d) {
  *d = reinterpret_cast<cudnnBackendDescriptor_t>(new Descriptor{type, {}, false});
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t, int64_t count, const void* elements) {
  auto* desc = reinterpret_cast<Descriptor*>(d);
  if (desc->finalized) return CUDNN_STATUS_BAD_PARAM;
  if (name == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS) {
    const auto* p = static_cast<void* const*>(elements);
    desc->data_pointers.assign(p, p + count);
  }
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d) {
  reinterpret_cast<Descriptor*>(d)->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
  delete reinterpret_cast<Descriptor*>(d);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack) {
  const auto* p = reinterpret_cast<Descriptor*>(pack);
  if (!reinterpret_cast<Descriptor*>(plan)->finalized || !p->finalized || p->data_pointers.size() != 2) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  const int count = ++g_executes;
  static const bool hidden = std::getenv("FAKE_CUDNN_HIDDEN_STATE") != nullptr;
  CUdeviceptr x = reinterpret_cast<CUdeviceptr>(p->data_pointers[0]);
  CUdeviceptr y = reinterpret_cast<CUdeviceptr>(p->data_pointers[1]);
  int scalar = hidden ? count : 3;
  void* args[] = {&x, &y, &scalar};
  const auto stream = reinterpret_cast<CUstream>(reinterpret_cast<Handle*>(handle)->stream);
  static const bool fork = std::getenv("FAKE_CUDNN_FORK") != nullptr;
  if (!fork) {
    return cuLaunchKernel(fake_driver_function("scale"), 2, 1, 1, 64, 1, 1, 0, stream, args, nullptr) == CUDA_SUCCESS
               ? CUDNN_STATUS_SUCCESS
               : CUDNN_STATUS_EXECUTION_FAILED;
  }
  static CUstream own = nullptr;
  static CUevent forked = nullptr, joined = nullptr;
  if (!own && (cuStreamCreate(&own, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS || cuEventCreate(&forked, 0) != CUDA_SUCCESS ||
               cuEventCreate(&joined, 0) != CUDA_SUCCESS)) {
    return CUDNN_STATUS_INTERNAL_ERROR;
  }
  const bool ok = cuEventRecord(forked, stream) == CUDA_SUCCESS && cuStreamWaitEvent(own, forked, 0) == CUDA_SUCCESS &&
                  cuLaunchKernel(fake_driver_function("scale"), 2, 1, 1, 64, 1, 1, 0, own, args, nullptr) == CUDA_SUCCESS &&
                  cuEventRecord(joined, own) == CUDA_SUCCESS && cuStreamWaitEvent(stream, joined, 0) == CUDA_SUCCESS;
  return ok ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
