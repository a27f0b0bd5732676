// The driver entry points replay uses, resolved at run time through a caller-supplied look-up
// (libnimble.so passes the real driver's, so replay is never intercepted). One list below
// declares them all: name, cuGetProcAddress name, version, and the PFN typedef.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace nimble::replayer {

#define NIMBLE_REPLAY_DRIVER_FUNCTIONS(X)                                               \
  X(stream_create, "cuStreamCreate", 2000, PFN_cuStreamCreate_v2000)                    \
  X(stream_destroy, "cuStreamDestroy", 4000, PFN_cuStreamDestroy_v4000)                 \
  X(stream_synchronize, "cuStreamSynchronize", 2000, PFN_cuStreamSynchronize_v2000)     \
  X(stream_wait_event, "cuStreamWaitEvent", 3020, PFN_cuStreamWaitEvent_v3020)          \
  X(event_create, "cuEventCreate", 2000, PFN_cuEventCreate_v2000)                       \
  X(event_destroy, "cuEventDestroy", 4000, PFN_cuEventDestroy_v4000)                    \
  X(event_record, "cuEventRecord", 2000, PFN_cuEventRecord_v2000)                       \
  X(event_synchronize, "cuEventSynchronize", 2000, PFN_cuEventSynchronize_v2000)        \
  X(event_elapsed_time, "cuEventElapsedTime", 12080, PFN_cuEventElapsedTime_v12080)     \
  X(ctx_synchronize, "cuCtxSynchronize", 2000, PFN_cuCtxSynchronize_v2000)              \
  X(begin_capture, "cuStreamBeginCapture", 10010, PFN_cuStreamBeginCapture_v10010)      \
  X(end_capture, "cuStreamEndCapture", 10000, PFN_cuStreamEndCapture_v10000)            \
  X(capture_info, "cuStreamGetCaptureInfo", 12030, PFN_cuStreamGetCaptureInfo_v12030)   \
  X(update_capture_deps, "cuStreamUpdateCaptureDependencies", 12030,                    \
    PFN_cuStreamUpdateCaptureDependencies_v12030)                                       \
  X(graph_instantiate, "cuGraphInstantiateWithFlags", 11040, PFN_cuGraphInstantiateWithFlags_v11040) \
  X(graph_launch, "cuGraphLaunch", 10000, PFN_cuGraphLaunch_v10000)                     \
  X(graph_exec_destroy, "cuGraphExecDestroy", 10000, PFN_cuGraphExecDestroy_v10000)     \
  X(graph_destroy, "cuGraphDestroy", 10000, PFN_cuGraphDestroy_v10000)                  \
  X(graph_get_nodes, "cuGraphGetNodes", 10000, PFN_cuGraphGetNodes_v10000)              \
  X(graph_kernel_node_get_params, "cuGraphKernelNodeGetParams", 12000,                  \
    PFN_cuGraphKernelNodeGetParams_v12000)                                              \
  X(graph_exec_kernel_node_set_params, "cuGraphExecKernelNodeSetParams", 12000,         \
    PFN_cuGraphExecKernelNodeSetParams_v12000)                                          \
  X(graph_memset_node_get_params, "cuGraphMemsetNodeGetParams", 10000,                  \
    PFN_cuGraphMemsetNodeGetParams_v10000)                                              \
  X(graph_exec_memset_node_set_params, "cuGraphExecMemsetNodeSetParams", 10020,         \
    PFN_cuGraphExecMemsetNodeSetParams_v10020)                                          \
  X(graph_memcpy_node_get_params, "cuGraphMemcpyNodeGetParams", 10000,                  \
    PFN_cuGraphMemcpyNodeGetParams_v10000)                                              \
  X(graph_exec_memcpy_node_set_params, "cuGraphExecMemcpyNodeSetParams", 10020,         \
    PFN_cuGraphExecMemcpyNodeSetParams_v10020)                                          \
  X(ctx_get_current, "cuCtxGetCurrent", 4000, PFN_cuCtxGetCurrent_v4000)                \
  X(ctx_set_current, "cuCtxSetCurrent", 4000, PFN_cuCtxSetCurrent_v4000)                \
  X(pointer_get_attribute, "cuPointerGetAttribute", 4000, PFN_cuPointerGetAttribute_v4000) \
  X(launch_kernel, "cuLaunchKernel", 4000, PFN_cuLaunchKernel_v4000)                    \
  X(launch_kernel_ex, "cuLaunchKernelEx", 11060, PFN_cuLaunchKernelEx_v11060)           \
  X(memcpy_htod_async, "cuMemcpyHtoDAsync", 3020, PFN_cuMemcpyHtoDAsync_v3020)          \
  X(memcpy_dtoh_async, "cuMemcpyDtoHAsync", 3020, PFN_cuMemcpyDtoHAsync_v3020)          \
  X(memcpy_dtod_async, "cuMemcpyDtoDAsync", 3020, PFN_cuMemcpyDtoDAsync_v3020)          \
  X(memcpy_dtoh, "cuMemcpyDtoH", 3020, PFN_cuMemcpyDtoH_v3020)                          \
  X(memset_d8_async, "cuMemsetD8Async", 3020, PFN_cuMemsetD8Async_v3020)                \
  X(memset_d16_async, "cuMemsetD16Async", 3020, PFN_cuMemsetD16Async_v3020)             \
  X(memset_d32_async, "cuMemsetD32Async", 3020, PFN_cuMemsetD32Async_v3020)             \
  X(memset_d2d8_async, "cuMemsetD2D8Async", 3020, PFN_cuMemsetD2D8Async_v3020)          \
  X(memset_d2d16_async, "cuMemsetD2D16Async", 3020, PFN_cuMemsetD2D16Async_v3020)       \
  X(memset_d2d32_async, "cuMemsetD2D32Async", 3020, PFN_cuMemsetD2D32Async_v3020)       \
  X(mem_alloc, "cuMemAlloc", 3020, PFN_cuMemAlloc_v3020)                                \
  X(mem_free, "cuMemFree", 3020, PFN_cuMemFree_v3020)                                   \
  X(mem_alloc_host, "cuMemAllocHost", 3020, PFN_cuMemAllocHost_v3020)                   \
  X(mem_free_host, "cuMemFreeHost", 2000, PFN_cuMemFreeHost_v2000)                      \
  X(mem_get_info, "cuMemGetInfo", 3020, PFN_cuMemGetInfo_v3020)                         \
  X(get_error_name, "cuGetErrorName", 6000, PFN_cuGetErrorName_v6000)                  \
  X(ctx_get_device, "cuCtxGetDevice", 2000, PFN_cuCtxGetDevice_v2000)                   \
  X(func_get_attribute, "cuFuncGetAttribute", 2020, PFN_cuFuncGetAttribute_v2020)       \
  X(kernel_get_attribute, "cuKernelGetAttribute", 12000, PFN_cuKernelGetAttribute_v12000) \
  X(func_set_attribute, "cuFuncSetAttribute", 9000, PFN_cuFuncSetAttribute_v9000)       \
  X(kernel_set_attribute, "cuKernelSetAttribute", 12000, PFN_cuKernelSetAttribute_v12000)

struct DriverApi {
#define NIMBLE_REPLAY_FIELD(field, name, version, pfn) pfn field = nullptr;
  NIMBLE_REPLAY_DRIVER_FUNCTIONS(NIMBLE_REPLAY_FIELD)
#undef NIMBLE_REPLAY_FIELD
};

using DriverLookup = void* (*)(const char* name, int version);

// Fills `api`; false with the names that could not be found in `missing`.
bool load_driver_api(DriverLookup lookup, DriverApi& api, std::string* missing);

}  // namespace nimble::replayer
