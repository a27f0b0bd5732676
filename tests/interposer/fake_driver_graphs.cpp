// The fake driver's stream capture and graphs: enough for `nimble run` to build, patch and
// launch its graphs on a CPU, and for a program to build its own graphs node by node (as XLA's
// command buffers do). Launches on a capturing stream count as "captured"; a graph launch
// counts as "cuGraphLaunch"; node parameter updates count too, so tests can tell replayed
// iterations from eager ones. Graphs keep their nodes (kernel arguments, edges, child graphs),
// execs their own copy (changed by node updates), and a graph launch runs its kernel nodes into
// the work digest and calls its host nodes.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "fake_driver.hpp"

namespace {

std::mutex g_mu;
std::set<CUstream> g_capturing;
// GLOBAL-mode captures open (stream -> the thread that began it), and those invalidated: as the
// real driver does, a potentially unsafe call (cuMemAllocHost here) from another thread in the
// default mode fails and invalidates them.
std::map<CUstream, std::thread::id> g_global_captures;
std::set<CUstream> g_invalidated;
std::uintptr_t g_next = 0x900000;

struct Node {
  CUgraphNode handle = nullptr;
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_KERNEL;
  CUfunction function = nullptr;  // null: not a kernel
  std::vector<std::uint8_t> args;
  std::size_t arg_size = 0;       // for the `extra` buffer cuGraphKernelNodeGetParams hands out
  std::vector<CUgraphNode> preds;
  CUDA_MEMSET_NODE_PARAMS memset{};
  CUDA_HOST_NODE_PARAMS host{};
  CUgraph child = nullptr;        // CU_GRAPH_NODE_TYPE_GRAPH: the node's own copy
};
std::map<CUstream, CUgraph> g_capture_graph;  // per capturing stream: the graph it builds
std::map<CUgraph, std::vector<Node>> g_graphs;
std::map<CUgraphExec, std::vector<Node>> g_execs;

Node* find_node(std::vector<Node>& nodes, CUgraphNode handle) {
  for (Node& n : nodes) {
    if (n.handle == handle) return &n;
  }
  return nullptr;
}

template <class T>
T fresh_locked() {
  return reinterpret_cast<T>(g_next += 0x10);
}

template <class T>
T fresh() {
  std::lock_guard<std::mutex> lock(g_mu);
  return fresh_locked<T>();
}

Node* find_anywhere(CUgraphNode handle) {
  for (auto& [graph, nodes] : g_graphs) {
    if (Node* n = find_node(nodes, handle)) return n;
  }
  return nullptr;
}

// Adds `n` to `graph` after `deps` (explicit graph building); returns its handle.
CUgraphNode add_node(CUgraph graph, const CUgraphNode* deps, size_t count, Node n) {
  std::lock_guard<std::mutex> lock(g_mu);
  n.handle = fresh_locked<CUgraphNode>();
  n.preds.assign(deps, deps + count);
  n.arg_size = n.args.size();
  g_graphs[graph].push_back(std::move(n));
  return g_graphs[graph].back().handle;
}

// Hands the node `handle` names (in any graph) to `read`; CUDA_ERROR_INVALID_VALUE when none does.
template <class Read>
CUresult read_node(CUgraphNode handle, Read read) {
  std::lock_guard<std::mutex> lock(g_mu);
  const Node* n = find_anywhere(handle);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  read(*n);
  return CUDA_SUCCESS;
}

// A copy of `graph` with fresh node handles (child graph nodes embed one).
CUgraph clone_locked(CUgraph graph) {
  const CUgraph copy = fresh_locked<CUgraph>();
  std::map<CUgraphNode, CUgraphNode> renamed;
  std::vector<Node> nodes = g_graphs[graph];
  for (Node& n : nodes) {
    const CUgraphNode handle = fresh_locked<CUgraphNode>();
    renamed[n.handle] = handle;
    n.handle = handle;
    for (CUgraphNode& p : n.preds) p = renamed[p];
    if (n.child) n.child = clone_locked(n.child);
  }
  g_graphs[copy] = std::move(nodes);
  return copy;
}

void run_nodes(const std::vector<Node>& nodes, CUstream stream) {
  for (const Node& n : nodes) {
    if (n.function) fake::ran_kernel(n.function, n.args, stream);
    if (n.type == CU_GRAPH_NODE_TYPE_HOST && n.host.fn) n.host.fn(n.host.userData);
    if (n.type == CU_GRAPH_NODE_TYPE_GRAPH) {
      std::vector<Node> inner;
      {
        std::lock_guard<std::mutex> lock(g_mu);
        inner = g_graphs[n.child];
      }
      run_nodes(inner, stream);
    }
  }
}

// Edges changed in place (the Python API's rewiring): `to` gains or loses `from` as predecessor.
template <class Change>
CUresult change_edges(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, size_t n, Change change) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto& nodes = g_graphs[g];
  for (std::size_t i = 0; i < n; ++i) {
    Node* target = find_node(nodes, to[i]);
    if (!target || !find_node(nodes, from[i]) || !change(target->preds, from[i])) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
}  // namespace

namespace fake {

bool capturing(CUstream stream) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_capturing.count(stream) > 0;
}

bool any_capturing() {
  std::lock_guard<std::mutex> lock(g_mu);
  return !g_capturing.empty();
}

void captured(CUstream stream, CUfunction f, std::vector<std::uint8_t> args) {
  std::lock_guard<std::mutex> lock(g_mu);
  Node n;
  n.handle = fresh_locked<CUgraphNode>();
  n.type = f ? CU_GRAPH_NODE_TYPE_KERNEL : CU_GRAPH_NODE_TYPE_EMPTY;
  n.function = f;
  n.args = std::move(args);
  n.arg_size = n.args.size();
  auto& pending = g_graphs[g_capture_graph[stream]];
  if (!pending.empty()) n.preds.push_back(pending.back().handle);  // stream order: a chain
  pending.push_back(std::move(n));
}

}  // namespace fake

extern "C" {

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode) {
  fake::called("cuStreamBeginCapture");
  std::lock_guard<std::mutex> lock(g_mu);
  g_capturing.insert(s);
  if (mode == CU_STREAM_CAPTURE_MODE_GLOBAL) g_global_captures[s] = std::this_thread::get_id();
  g_capture_graph[s] = fresh_locked<CUgraph>();
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream s, CUgraph* g) {
  fake::called("cuStreamEndCapture");
  // A capture held open a while: tests of what the program's calls meet meanwhile.
  if (const char* ms = std::getenv("FAKE_DRIVER_CAPTURE_MS")) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
  std::lock_guard<std::mutex> lock(g_mu);
  g_capturing.erase(s);
  g_global_captures.erase(s);
  *g = g_capture_graph[s];
  g_graphs[*g];
  g_capture_graph.erase(s);
  if (g_invalidated.erase(s)) {
    fake::called("capture invalidated");
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  }
  return CUDA_SUCCESS;
}
CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus* status, cuuint64_t*, CUgraph* graph,
                                   const CUgraphNode** deps, const CUgraphEdgeData**, size_t* count) {
  static thread_local CUgraphNode last;  // "the node just added"
  bool active = false;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_capture_graph.find(s);
    active = it != g_capture_graph.end();
    const std::vector<Node>* nodes = active ? &g_graphs[it->second] : nullptr;
    last = nodes && !nodes->empty() ? nodes->back().handle : fresh_locked<CUgraphNode>();
    if (graph) *graph = active ? it->second : nullptr;
  }
  // Callers outside nimble's replay (the Python API's marks) ask streams that are not capturing.
  if (status) *status = active || !graph ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  if (deps) *deps = &last;
  if (count) *count = 1;
  return CUDA_SUCCESS;
}
CUresult cuStreamUpdateCaptureDependencies_v2(CUstream, CUgraphNode*, const CUgraphEdgeData*, size_t, unsigned) {
  return CUDA_SUCCESS;
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* e, CUgraph g, unsigned long long) {
  fake::called("cuGraphInstantiateWithFlags");
  // A slow instantiation (as a real driver's for a large graph): tests of what the program does
  // meanwhile.
  if (const char* ms = std::getenv("FAKE_DRIVER_INSTANTIATE_MS")) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(ms)));
  *e = fresh<CUgraphExec>();
  std::lock_guard<std::mutex> lock(g_mu);
  g_execs[*e] = g_graphs[g];
  return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) {
  fake::called("cuGraphLaunch");
  static const int us = fake::env_microseconds("FAKE_DRIVER_GRAPH_LAUNCH_US");
  fake::spend_host_time(us);
  std::vector<Node> nodes;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    nodes = g_execs[e];
  }
  run_nodes(nodes, s);
  return CUDA_SUCCESS;
}
CUresult cuGraphExecDestroy(CUgraphExec) {
  fake::called("cuGraphExecDestroy");
  return CUDA_SUCCESS;
}
CUresult cuGraphExecUpdate_v2(CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo*) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_execs[e] = g_graphs[g];
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph) {
  fake::called("cuGraphDestroy");
  return CUDA_SUCCESS;
}
CUresult cuGraphGetNodes(CUgraph g, CUgraphNode* out, size_t* n) {
  std::lock_guard<std::mutex> lock(g_mu);
  const auto& nodes = g_graphs[g];
  if (out) {
    for (std::size_t i = 0; i < nodes.size() && i < *n; ++i) out[i] = nodes[i].handle;
  }
  *n = nodes.size();
  return CUDA_SUCCESS;
}
CUresult cuGraphGetEdges_v2(CUgraph g, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* data, size_t* n) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::size_t count = 0;
  for (const Node& node : g_graphs[g]) {
    for (CUgraphNode p : node.preds) {
      if (from && count < *n) {
        from[count] = p;
        to[count] = node.handle;
        if (data) data[count] = {};
      }
      ++count;
    }
  }
  *n = count;
  return CUDA_SUCCESS;
}
CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode* from, const CUgraphNode* to, const CUgraphEdgeData*,
                                   size_t n) {
  return change_edges(g, from, to, n, [](std::vector<CUgraphNode>& preds, CUgraphNode p) {
    if (std::find(preds.begin(), preds.end(), p) != preds.end()) return false;  // as the driver: no duplicates
    preds.push_back(p);
    return true;
  });
}
CUresult cuGraphRemoveDependencies_v2(CUgraph g, const CUgraphNode* from, const CUgraphNode* to,
                                      const CUgraphEdgeData*, size_t n) {
  return change_edges(g, from, to, n, [](std::vector<CUgraphNode>& preds, CUgraphNode p) {
    auto it = std::find(preds.begin(), preds.end(), p);
    if (it == preds.end()) return false;
    preds.erase(it);
    return true;
  });
}
CUresult cuGraphNodeGetType(CUgraphNode node, CUgraphNodeType* type) {
  return read_node(node, [&](const Node& n) { *type = n.type; });
}
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS* p) {
  // The node owns what it hands out: its argument bytes as an `extra` buffer.
  static thread_local void* extra[5];
  *p = {};
  std::lock_guard<std::mutex> lock(g_mu);
  Node* n = find_anywhere(node);
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  p->func = n->function;
  p->gridDimX = p->gridDimY = p->gridDimZ = 1;
  p->blockDimX = p->blockDimY = p->blockDimZ = 1;
  extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER, extra[1] = n->args.data();
  extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE, extra[3] = &n->arg_size, extra[4] = CU_LAUNCH_PARAM_END;
  p->extra = extra;
  return CUDA_SUCCESS;
}
CUresult cuGraphKernelNodeGetAttribute(CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue* v) {
  *v = {};
  return CUDA_SUCCESS;
}
CUresult cuGraphHostNodeGetParams(CUgraphNode node, CUDA_HOST_NODE_PARAMS* p) {
  return read_node(node, [&](const Node& n) { *p = n.host; });
}
CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode node, CUgraph* child) {
  return read_node(node, [&](const Node& n) { *child = n.child; });
}
CUresult cuGraphCreate(CUgraph* g, unsigned) {
  std::lock_guard<std::mutex> lock(g_mu);
  *g = fresh_locked<CUgraph>();
  g_graphs[*g];
  return CUDA_SUCCESS;
}
CUresult cuGraphAddKernelNode_v2(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t count,
                                 const CUDA_KERNEL_NODE_PARAMS* p) {
  Node n;
  n.function = p->func;
  n.args = fake::kernel_args(p->func, p->kernelParams, p->extra);
  *out = add_node(g, deps, count, std::move(n));
  return CUDA_SUCCESS;
}
CUresult cuGraphAddMemsetNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t count,
                              const CUDA_MEMSET_NODE_PARAMS* p, CUcontext) {
  Node n;
  n.type = CU_GRAPH_NODE_TYPE_MEMSET;
  n.memset = *p;
  *out = add_node(g, deps, count, std::move(n));
  return CUDA_SUCCESS;
}
CUresult cuGraphAddHostNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t count,
                            const CUDA_HOST_NODE_PARAMS* p) {
  Node n;
  n.type = CU_GRAPH_NODE_TYPE_HOST;
  n.host = *p;
  *out = add_node(g, deps, count, std::move(n));
  return CUDA_SUCCESS;
}
CUresult cuGraphAddEmptyNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t count) {
  Node n;
  n.type = CU_GRAPH_NODE_TYPE_EMPTY;
  *out = add_node(g, deps, count, std::move(n));
  return CUDA_SUCCESS;
}
CUresult cuGraphAddChildGraphNode(CUgraphNode* out, CUgraph g, const CUgraphNode* deps, size_t count, CUgraph child) {
  Node n;
  n.type = CU_GRAPH_NODE_TYPE_GRAPH;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    n.child = clone_locked(child);
  }
  *out = add_node(g, deps, count, std::move(n));
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
CUresult cuGraphMemsetNodeGetParams(CUgraphNode node, CUDA_MEMSET_NODE_PARAMS* p) {
  std::lock_guard<std::mutex> lock(g_mu);
  const Node* n = find_anywhere(node);
  *p = n ? n->memset : CUDA_MEMSET_NODE_PARAMS{};
  return CUDA_SUCCESS;
}
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
CUresult cuCtxSetCurrent(CUcontext c) {
  return c == reinterpret_cast<CUcontext>(0x77) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
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
CUresult cuMemAllocHost_v2(void** p, size_t n) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    bool prohibited = false;
    for (const auto& [stream, thread] : g_global_captures) {
      if (thread == std::this_thread::get_id()) continue;
      g_invalidated.insert(stream);
      prohibited = true;
    }
    if (prohibited) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  *p = std::malloc(n);
  return CUDA_SUCCESS;
}
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
    E("cuGraphExecUpdate", 12000, cuGraphExecUpdate_v2),
    E("cuGraphDestroy", 10000, cuGraphDestroy),
    E("cuGraphGetNodes", 10000, cuGraphGetNodes),
    E("cuGraphGetEdges", 12030, cuGraphGetEdges_v2),
    E("cuGraphAddDependencies", 12030, cuGraphAddDependencies_v2),
    E("cuGraphRemoveDependencies", 12030, cuGraphRemoveDependencies_v2),
    E("cuGraphNodeGetType", 10000, cuGraphNodeGetType),
    E("cuGraphKernelNodeGetAttribute", 11000, cuGraphKernelNodeGetAttribute),
    E("cuGraphHostNodeGetParams", 10000, cuGraphHostNodeGetParams),
    E("cuGraphChildGraphNodeGetGraph", 10000, cuGraphChildGraphNodeGetGraph),
    E("cuGraphCreate", 10000, cuGraphCreate),
    E("cuGraphAddKernelNode", 12000, cuGraphAddKernelNode_v2),
    E("cuGraphAddMemsetNode", 10000, cuGraphAddMemsetNode),
    E("cuGraphAddHostNode", 10000, cuGraphAddHostNode),
    E("cuGraphAddEmptyNode", 10000, cuGraphAddEmptyNode),
    E("cuGraphAddChildGraphNode", 10000, cuGraphAddChildGraphNode),
    E("cuGraphKernelNodeGetParams", 12000, cuGraphKernelNodeGetParams_v2),
    E("cuGraphExecKernelNodeSetParams", 12000, cuGraphExecKernelNodeSetParams_v2),
    E("cuGraphMemsetNodeGetParams", 10000, cuGraphMemsetNodeGetParams),
    E("cuGraphExecMemsetNodeSetParams", 10020, cuGraphExecMemsetNodeSetParams),
    E("cuGraphMemcpyNodeGetParams", 10000, cuGraphMemcpyNodeGetParams),
    E("cuGraphExecMemcpyNodeSetParams", 10020, cuGraphExecMemcpyNodeSetParams),
    E("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    E("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
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
