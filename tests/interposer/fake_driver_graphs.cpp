// The fake driver's stream capture and graphs: enough for `nimble run` to build, patch and
// launch its graphs on a CPU. Launches on a capturing stream count as "captured"; a graph launch
// counts as "cuGraphLaunch"; node parameter updates count too, so tests can tell replayed
// iterations from eager ones. Graphs keep their kernel nodes' arguments, execs their own copy
// (changed by node updates), and a graph launch runs its kernel nodes into the work digest.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "fake_driver.hpp"

namespace {

std::mutex g_mu;
std::set<CUstream> g_capturing;
std::uintptr_t g_next = 0x900000;

struct Node {
  CUgraphNode handle = nullptr;  // given by the cuStreamGetCaptureInfo that follows the op
  CUfunction function = nullptr;  // null: not a kernel
  std::vector<std::uint8_t> args;
};
std::map<CUstream, std::vector<Node>> g_pending;  // per capturing stream
std::map<CUgraph, std::vector<Node>> g_graphs;
std::map<CUgraphExec, std::vector<Node>> g_execs;

Node* find_node(std::vector<Node>& nodes, CUgraphNode handle) {
  for (Node& n : nodes) {
    if (n.handle == handle) return &n;
  }
  return nullptr;
}

template <class T>
T fresh() {
  std::lock_guard<std::mutex> lock(g_mu);
  return reinterpret_cast<T>(g_next += 0x10);
}

}  // namespace

namespace fake {

bool capturing(CUstream stream) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_capturing.count(stream) > 0;
}

void captured(CUstream stream, CUfunction f, std::vector<std::uint8_t> args) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_pending[stream].push_back({nullptr, f, std::move(args)});
}

}  // namespace fake

extern "C" {

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode) {
  fake::called("cuStreamBeginCapture");
  std::lock_guard<std::mutex> lock(g_mu);
  g_capturing.insert(s);
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph* g) {
  fake::called("cuStreamEndCapture");
  *g = fresh<CUgraph>();
  std::lock_guard<std::mutex> lock(g_mu);
  g_capturing.erase(s);
  g_graphs[*g] = std::move(g_pending[s]);
  g_pending.erase(s);
  return CUDA_SUCCESS;
}
CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus* status, cuuint64_t*, CUgraph*,
                                   const CUgraphNode** deps, const CUgraphEdgeData**, size_t* count) {
  static thread_local CUgraphNode last;  // one fresh node per call: "the node just added"
  last = fresh<CUgraphNode>();
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_pending.find(s);
    if (it != g_pending.end() && !it->second.empty() && !it->second.back().handle) it->second.back().handle = last;
  }
  if (status) *status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (deps) *deps = &last;
  if (count) *count = 1;
  return CUDA_SUCCESS;
}
CUresult cuStreamUpdateCaptureDependencies_v2(CUstream, CUgraphNode*, const CUgraphEdgeData*, size_t, unsigned) {
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g, unsigned long long) {
  fake::called("cuGraphInstantiateWithFlags");
  *e = fresh<CUgraphExec>();
  std::lock_guard<std::mutex> lock(g_mu);
  g_execs[*e] = g_graphs[g];
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream) {
  fake::called("cuGraphLaunch");
  std::vector<Node> nodes;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    nodes = g_execs[e];
  }
  for (const Node& n : nodes) {
    if (n.function) fake::ran_kernel(n.function, n.args);
  }
  return CUDA_SUCCESS;
}
CUresult cuGraphExecDestroy(CUgraphExec) { return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph) { return CUDA_SUCCESS; }
CUresult cuGraphGetNodes(CUgraph, CUgraphNode*, size_t* n) { *n = 0; return CUDA_SUCCESS; }
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS* p) {
  *p = {};
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto& [graph, nodes] : g_graphs) {
    if (const Node* n = find_node(nodes, node)) p->func = n->function;
  }
  return CUDA_SUCCESS;
}
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec e, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS* p) {
  fake::called("cuGraphExecKernelNodeSetParams");
  std::lock_guard<std::mutex> lock(g_mu);
  Node* n = find_node(g_execs[e], node);
  if (!n || !n->function) return CUDA_ERROR_INVALID_VALUE;
  n->args = fake::kernel_args(n->function, p->kernelParams, p->extra);
  return CUDA_SUCCESS;
}
CUresult cuGraphMemsetNodeGetParams(CUgraphNode, CUDA_MEMSET_NODE_PARAMS* p) { *p = {}; return CUDA_SUCCESS; }
CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS*, CUcontext) {
  fake::called("cuGraphExecMemsetNodeSetParams");
  return CUDA_SUCCESS;
}
CUresult cuGraphMemcpyNodeGetParams(CUgraphNode, CUDA_MEMCPY3D* p) { *p = {}; return CUDA_SUCCESS; }
CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D*, CUcontext) {
  fake::called("cuGraphExecMemcpyNodeSetParams");
  return CUDA_SUCCESS;
}
CUresult cuCtxGetCurrent(CUcontext* c) { *c = reinterpret_cast<CUcontext>(0x77); return CUDA_SUCCESS; }
CUresult cuLaunchKernelEx(const CUlaunchConfig* c, CUfunction, void**, void**) {
  fake::called(fake::capturing(c->hStream) ? "captured" : "cuLaunchKernelEx");
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream) { return CUDA_SUCCESS; }
CUresult cuEventDestroy_v2(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime_v2(float* ms, CUevent, CUevent) { *ms = 1; return CUDA_SUCCESS; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, size_t, CUstream s) {
  fake::called(fake::capturing(s) ? "captured" : "cuMemcpyDtoDAsync");
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr, unsigned char, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemsetD16Async(CUdeviceptr, unsigned short, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemsetD2D8Async(CUdeviceptr, size_t, unsigned char, size_t, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemsetD2D16Async(CUdeviceptr, size_t, unsigned short, size_t, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemsetD2D32Async(CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream) { return CUDA_SUCCESS; }
CUresult cuMemAllocHost_v2(void** p, size_t n) { *p = std::malloc(n); return CUDA_SUCCESS; }
CUresult cuMemFreeHost(void* p) { std::free(p); return CUDA_SUCCESS; }
CUresult cuMemGetInfo_v2(size_t* free, size_t* total) { *free = *total = std::size_t{1} << 34; return CUDA_SUCCESS; }
CUresult cuGetErrorName(CUresult, const char** name) { *name = "CUDA_ERROR_FAKE"; return CUDA_SUCCESS; }
CUresult cuFuncGetAttribute(int* v, CUfunction_attribute, CUfunction) { *v = 1 << 16; return CUDA_SUCCESS; }
CUresult cuKernelGetAttribute(int* v, CUfunction_attribute, CUkernel, CUdevice) { *v = 1 << 16; return CUDA_SUCCESS; }
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return CUDA_SUCCESS; }
CUresult cuKernelSetAttribute(CUfunction_attribute, int, CUkernel, CUdevice) { return CUDA_SUCCESS; }

}  // extern "C"

namespace fake {

#define E(name, version, fn) {name, version, false, reinterpret_cast<void*>(&fn)}
const Entry kGraphEntries[] = {
    E("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
    E("cuStreamEndCapture", 10000, cuStreamEndCapture),
    E("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3),
    E("cuStreamUpdateCaptureDependencies", 12030, cuStreamUpdateCaptureDependencies_v2),
    E("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    E("cuGraphLaunch", 10000, cuGraphLaunch),
    E("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    E("cuGraphDestroy", 10000, cuGraphDestroy),
    E("cuGraphGetNodes", 10000, cuGraphGetNodes),
    E("cuGraphKernelNodeGetParams", 12000, cuGraphKernelNodeGetParams_v2),
    E("cuGraphExecKernelNodeSetParams", 12000, cuGraphExecKernelNodeSetParams_v2),
    E("cuGraphMemsetNodeGetParams", 10000, cuGraphMemsetNodeGetParams),
    E("cuGraphExecMemsetNodeSetParams", 10020, cuGraphExecMemsetNodeSetParams),
    E("cuGraphMemcpyNodeGetParams", 10000, cuGraphMemcpyNodeGetParams),
    E("cuGraphExecMemcpyNodeSetParams", 10020, cuGraphExecMemcpyNodeSetParams),
    E("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    E("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    E("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    E("cuEventDestroy", 4000, cuEventDestroy_v2),
    E("cuEventSynchronize", 2000, cuEventSynchronize),
    E("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
    E("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2),
    E("cuMemsetD8Async", 3020, cuMemsetD8Async),
    E("cuMemsetD16Async", 3020, cuMemsetD16Async),
    E("cuMemsetD2D8Async", 3020, cuMemsetD2D8Async),
    E("cuMemsetD2D16Async", 3020, cuMemsetD2D16Async),
    E("cuMemsetD2D32Async", 3020, cuMemsetD2D32Async),
    E("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    E("cuMemFreeHost", 2000, cuMemFreeHost),
    E("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    E("cuGetErrorName", 6000, cuGetErrorName),
    E("cuFuncGetAttribute", 2020, cuFuncGetAttribute),
    E("cuKernelGetAttribute", 12000, cuKernelGetAttribute),
    E("cuFuncSetAttribute", 9000, cuFuncSetAttribute),
    E("cuKernelSetAttribute", 12000, cuKernelSetAttribute),
};
#undef E

const Entry* graph_entries(std::size_t* count) {
  const char* on = std::getenv("FAKE_DRIVER_GRAPHS");
  *count = on && on[0] == '1' ? sizeof kGraphEntries / sizeof kGraphEntries[0] : 0;
  return kGraphEntries;
}

}  // namespace fake
