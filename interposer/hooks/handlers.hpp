// What each wrapper does while recording: call the real function, then translate the call into
// dependency-engine events. One handler serves every variant with the same signature (the
// _ptsz/_ptds variants differ only in what stream 0 means, which HookInfo says).
#pragma once

#include <cuda.h>
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <tuple>

#include "function_ref.hpp"
#include "hook_table.hpp"

namespace nimble::hooks {

// Handler column value for entries that are only forwarded.
inline constexpr std::nullptr_t Forward = nullptr;

using H = const HookInfo&;

// funnel.cpp
CUresult on_get_proc_address_v1(H, PFN_cuGetProcAddress_v11030 real, const char* symbol,
                                void** pfn, int version, cuuint64_t flags);
CUresult on_get_proc_address_v2(H, PFN_cuGetProcAddress_v12000 real, const char* symbol,
                                void** pfn, int version, cuuint64_t flags,
                                CUdriverProcAddressQueryResult* status);

// handlers_graph.cpp: the program's own graphs (program_graphs.hpp)
CUresult on_graph_instantiate_with_flags(H, PFN_cuGraphInstantiateWithFlags_v11040 real, CUgraphExec* exec,
                                         CUgraph graph, unsigned long long flags);
CUresult on_graph_instantiate_with_params(H, PFN_cuGraphInstantiateWithParams_v12000 real, CUgraphExec* exec,
                                          CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params);
CUresult on_graph_exec_destroy(H, PFN_cuGraphExecDestroy_v10000 real, CUgraphExec exec);
CUresult on_graph_destroy(H, PFN_cuGraphDestroy_v10000 real, CUgraph graph);
CUresult on_graph_exec_update(H, PFN_cuGraphExecUpdate_v12000 real, CUgraphExec exec, CUgraph graph,
                              CUgraphExecUpdateResultInfo* info);
CUresult on_graph_exec_kernel_node_set_params(H, PFN_cuGraphExecKernelNodeSetParams_v12000 real, CUgraphExec exec,
                                              CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS* params);
CUresult on_graph_exec_memset_node_set_params(H, PFN_cuGraphExecMemsetNodeSetParams_v10020 real, CUgraphExec exec,
                                              CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS* params,
                                              CUcontext ctx);
CUresult on_graph_exec_memcpy_node_set_params(H, PFN_cuGraphExecMemcpyNodeSetParams_v10020 real, CUgraphExec exec,
                                              CUgraphNode node, const CUDA_MEMCPY3D* params, CUcontext ctx);
CUresult on_graph_exec_child_graph_node_set_params(H, PFN_cuGraphExecChildGraphNodeSetParams_v11010 real,
                                                   CUgraphExec exec, CUgraphNode node, CUgraph child);
CUresult on_graph_exec_host_node_set_params(H, PFN_cuGraphExecHostNodeSetParams_v10020 real, CUgraphExec exec,
                                            CUgraphNode node, const CUDA_HOST_NODE_PARAMS* params);
CUresult on_graph_exec_event_node_set_event(H, PFN_cuGraphExecEventRecordNodeSetEvent_v11010 real,
                                            CUgraphExec exec, CUgraphNode node, CUevent event);
CUresult on_graph_node_set_enabled(H, PFN_cuGraphNodeSetEnabled_v11060 real, CUgraphExec exec, CUgraphNode node,
                                   unsigned enabled);
CUresult on_graph_exec_node_set_params(H, PFN_cuGraphExecNodeSetParams_v12020 real, CUgraphExec exec,
                                       CUgraphNode node, CUgraphNodeParams* params);

// handlers_launch.cpp
CUresult on_launch_kernel(H, PFN_cuLaunchKernel_v4000 real, CUfunction f, unsigned gx,
                          unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared_mem, CUstream stream, void** params, void** extra);
CUresult on_launch_kernel_ex(H, PFN_cuLaunchKernelEx_v11060 real, const CUlaunchConfig* config,
                             CUfunction f, void** params, void** extra);
CUresult on_launch_cooperative_kernel(H, PFN_cuLaunchCooperativeKernel_v9000 real, CUfunction f,
                                      unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                      unsigned by, unsigned bz, unsigned shared_mem,
                                      CUstream stream, void** params);
CUresult on_launch_host_func(H, PFN_cuLaunchHostFunc_v10000 real, CUstream stream, CUhostFn fn,
                             void* user_data);
CUresult on_stream_add_callback(H, PFN_cuStreamAddCallback_v5000 real, CUstream stream,
                                CUstreamCallback callback, void* user_data, unsigned flags);
CUresult on_graph_launch(H, PFN_cuGraphLaunch_v10000 real, CUgraphExec exec, CUstream stream);

// handlers_copy.cpp
CUresult on_memcpy_htod(H, PFN_cuMemcpyHtoD_v3020 real, CUdeviceptr dst, const void* src,
                        size_t bytes);
CUresult on_memcpy_dtoh(H, PFN_cuMemcpyDtoH_v3020 real, void* dst, CUdeviceptr src, size_t bytes);
CUresult on_memcpy_dtod(H, PFN_cuMemcpyDtoD_v3020 real, CUdeviceptr dst, CUdeviceptr src,
                        size_t bytes);
CUresult on_memcpy_htod_async(H, PFN_cuMemcpyHtoDAsync_v3020 real, CUdeviceptr dst,
                              const void* src, size_t bytes, CUstream stream);
CUresult on_memcpy_dtoh_async(H, PFN_cuMemcpyDtoHAsync_v3020 real, void* dst, CUdeviceptr src,
                              size_t bytes, CUstream stream);
CUresult on_memcpy_dtod_async(H, PFN_cuMemcpyDtoDAsync_v3020 real, CUdeviceptr dst,
                              CUdeviceptr src, size_t bytes, CUstream stream);
CUresult on_memcpy(H, PFN_cuMemcpy_v4000 real, CUdeviceptr dst, CUdeviceptr src, size_t bytes);
CUresult on_memcpy_async(H, PFN_cuMemcpyAsync_v4000 real, CUdeviceptr dst, CUdeviceptr src,
                         size_t bytes, CUstream stream);
CUresult on_memcpy_peer(H, PFN_cuMemcpyPeer_v4000 real, CUdeviceptr dst, CUcontext dst_ctx,
                        CUdeviceptr src, CUcontext src_ctx, size_t bytes);
CUresult on_memcpy_peer_async(H, PFN_cuMemcpyPeerAsync_v4000 real, CUdeviceptr dst,
                              CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t bytes,
                              CUstream stream);
CUresult on_memcpy_2d(H, PFN_cuMemcpy2D_v3020 real, const CUDA_MEMCPY2D* copy);
CUresult on_memcpy_2d_async(H, PFN_cuMemcpy2DAsync_v3020 real, const CUDA_MEMCPY2D* copy,
                            CUstream stream);
CUresult on_memcpy_3d(H, PFN_cuMemcpy3D_v3020 real, const CUDA_MEMCPY3D* copy);
CUresult on_memcpy_3d_async(H, PFN_cuMemcpy3DAsync_v3020 real, const CUDA_MEMCPY3D* copy,
                            CUstream stream);
CUresult on_memcpy_3d_peer(H, PFN_cuMemcpy3DPeer_v4000 real, const CUDA_MEMCPY3D_PEER* copy);
CUresult on_memcpy_3d_peer_async(H, PFN_cuMemcpy3DPeerAsync_v4000 real,
                                 const CUDA_MEMCPY3D_PEER* copy, CUstream stream);
CUresult on_memcpy_batch_async_v1(H, PFN_cuMemcpyBatchAsync_v12080 real, CUdeviceptr* dsts,
                                  CUdeviceptr* srcs, size_t* sizes, size_t count,
                                  CUmemcpyAttributes* attrs, size_t* attr_idxs, size_t num_attrs,
                                  size_t* fail_idx, CUstream stream);
CUresult on_memcpy_batch_async(H, PFN_cuMemcpyBatchAsync_v13000 real, CUdeviceptr* dsts,
                               CUdeviceptr* srcs, size_t* sizes, size_t count,
                               CUmemcpyAttributes* attrs, size_t* attr_idxs, size_t num_attrs,
                               CUstream stream);

// handlers_memset.cpp (V: unsigned char / short / int for the D8 / D16 / D32 forms)
template <class V>
CUresult on_memset_1d(H, CUresult(CUDAAPI* real)(CUdeviceptr, V, size_t), CUdeviceptr dst,
                      V value, size_t count);
template <class V>
CUresult on_memset_1d_async(H, CUresult(CUDAAPI* real)(CUdeviceptr, V, size_t, CUstream),
                            CUdeviceptr dst, V value, size_t count, CUstream stream);
template <class V>
CUresult on_memset_2d(H, CUresult(CUDAAPI* real)(CUdeviceptr, size_t, V, size_t, size_t),
                      CUdeviceptr dst, size_t pitch, V value, size_t width, size_t height);
template <class V>
CUresult on_memset_2d_async(H,
                            CUresult(CUDAAPI* real)(CUdeviceptr, size_t, V, size_t, size_t,
                                                    CUstream),
                            CUdeviceptr dst, size_t pitch, V value, size_t width, size_t height,
                            CUstream stream);

// handlers_alloc.cpp
CUresult on_mem_alloc(H, PFN_cuMemAlloc_v3020 real, CUdeviceptr* dptr, size_t bytes);
CUresult on_mem_alloc_pitch(H, PFN_cuMemAllocPitch_v3020 real, CUdeviceptr* dptr, size_t* pitch,
                            size_t width, size_t height, unsigned element_size);
CUresult on_mem_free(H, PFN_cuMemFree_v3020 real, CUdeviceptr dptr);
CUresult on_mem_alloc_async(H, PFN_cuMemAllocAsync_v11020 real, CUdeviceptr* dptr, size_t bytes,
                            CUstream stream);
CUresult on_mem_alloc_from_pool_async(H, PFN_cuMemAllocFromPoolAsync_v11020 real,
                                      CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool,
                                      CUstream stream);
CUresult on_mem_free_async(H, PFN_cuMemFreeAsync_v11020 real, CUdeviceptr dptr, CUstream stream);
CUresult on_mem_alloc_managed(H, PFN_cuMemAllocManaged_v6000 real, CUdeviceptr* dptr,
                              size_t bytes, unsigned flags);
CUresult on_mem_host_alloc(H, PFN_cuMemHostAlloc_v2020 real, void** pp, size_t bytes,
                           unsigned flags);
CUresult on_mem_alloc_host(H, PFN_cuMemAllocHost_v3020 real, void** pp, size_t bytes);
CUresult on_mem_free_host(H, PFN_cuMemFreeHost_v2000 real, void* p);
CUresult on_mem_address_reserve(H, PFN_cuMemAddressReserve_v10020 real, CUdeviceptr* ptr,
                                size_t size, size_t alignment, CUdeviceptr addr,
                                unsigned long long flags);
CUresult on_mem_address_free(H, PFN_cuMemAddressFree_v10020 real, CUdeviceptr ptr, size_t size);
CUresult on_mem_map(H, PFN_cuMemMap_v10020 real, CUdeviceptr ptr, size_t size, size_t offset,
                    CUmemGenericAllocationHandle handle, unsigned long long flags);
CUresult on_mem_unmap(H, PFN_cuMemUnmap_v10020 real, CUdeviceptr ptr, size_t size);
CUresult on_module_get_global(H, PFN_cuModuleGetGlobal_v3020 real, CUdeviceptr* dptr,
                              size_t* bytes, CUmodule module, const char* name);
CUresult on_library_get_global(H, PFN_cuLibraryGetGlobal_v12000 real, CUdeviceptr* dptr,
                               size_t* bytes, CUlibrary library, const char* name);
CUresult on_tensor_map_encode_tiled(H, PFN_cuTensorMapEncodeTiled_v12000 real, CUtensorMap* map,
                                    CUtensorMapDataType type, cuuint32_t rank, void* address,
                                    const cuuint64_t* dims, const cuuint64_t* strides,
                                    const cuuint32_t* box, const cuuint32_t* element_strides,
                                    CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                    CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob);
CUresult on_tensor_map_encode_im2col(H, PFN_cuTensorMapEncodeIm2col_v12000 real,
                                     CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                     void* address, const cuuint64_t* dims,
                                     const cuuint64_t* strides, const int* lower,
                                     const int* upper, cuuint32_t channels, cuuint32_t pixels,
                                     const cuuint32_t* element_strides,
                                     CUtensorMapInterleave interleave,
                                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                     CUtensorMapFloatOOBfill oob);

// handlers_stream_ops.cpp: stream-ordered work nimble does not look into (stream memory operations,
// prefetches and discards, array copies, external semaphores, sparse mappings). Each call is one
// opaque `stream_op` task that may touch any memory, so nothing is reordered around it; nimble run
// replays no iteration that holds one, and lets none overtake the calls it holds.
CUresult record_stream_op(H, CUstream stream, FunctionRef<CUresult()> call);
// The handlers of such entries, by where the call takes its stream: first, last, or none (the
// synchronous array copies, on the default stream).
inline constexpr auto on_stream_op_first = [](H h, auto real, auto... args) -> CUresult {
  return record_stream_op(h, std::get<0>(std::tuple{args...}), [&] { return real(args...); });
};
inline constexpr auto on_stream_op_last = [](H h, auto real, auto... args) -> CUresult {
  return record_stream_op(h, std::get<sizeof...(args) - 1>(std::tuple{args...}), [&] { return real(args...); });
};
inline constexpr auto on_default_stream_op = [](H h, auto real, auto... args) -> CUresult {
  return record_stream_op(h, nullptr, [&] { return real(args...); });
};

// handlers_stream.cpp
CUresult on_stream_create(H, PFN_cuStreamCreate_v2000 real, CUstream* stream, unsigned flags);
CUresult on_stream_create_with_priority(H, PFN_cuStreamCreateWithPriority_v5050 real,
                                        CUstream* stream, unsigned flags, int priority);
CUresult on_stream_destroy(H, PFN_cuStreamDestroy_v4000 real, CUstream stream);
CUresult on_event_record(H, PFN_cuEventRecord_v2000 real, CUevent event, CUstream stream);
CUresult on_event_record_with_flags(H, PFN_cuEventRecordWithFlags_v11010 real, CUevent event,
                                    CUstream stream, unsigned flags);
CUresult on_stream_wait_event(H, PFN_cuStreamWaitEvent_v3020 real, CUstream stream, CUevent event,
                              unsigned flags);
CUresult on_stream_synchronize(H, PFN_cuStreamSynchronize_v2000 real, CUstream stream);
CUresult on_stream_query(H, PFN_cuStreamQuery_v2000 real, CUstream stream);
CUresult on_ctx_synchronize(H, PFN_cuCtxSynchronize_v2000 real);
CUresult on_ctx_synchronize_v2(H, PFN_cuCtxSynchronize_v13000 real, CUcontext ctx);
CUresult on_event_synchronize(H, PFN_cuEventSynchronize_v2000 real, CUevent event);
CUresult on_event_query(H, PFN_cuEventQuery_v2000 real, CUevent event);
CUresult on_stream_begin_capture_v1(H, PFN_cuStreamBeginCapture_v10000 real, CUstream stream);
CUresult on_stream_begin_capture(H, PFN_cuStreamBeginCapture_v10010 real, CUstream stream,
                                 CUstreamCaptureMode mode);
CUresult on_stream_begin_capture_to_graph(H, PFN_cuStreamBeginCaptureToGraph_v12030 real,
                                          CUstream stream, CUgraph graph,
                                          const CUgraphNode* dependencies,
                                          const CUgraphEdgeData* edge_data, size_t count,
                                          CUstreamCaptureMode mode);
CUresult on_stream_end_capture(H, PFN_cuStreamEndCapture_v10000 real, CUstream stream,
                               CUgraph* graph);
CUresult on_profiler_start(H, PFN_cuProfilerStart_v4000 real);
CUresult on_profiler_stop(H, PFN_cuProfilerStop_v4000 real);

}  // namespace nimble::hooks
