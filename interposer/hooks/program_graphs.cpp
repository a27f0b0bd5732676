#include "program_graphs.hpp"

#include <algorithm>
#include <initializer_list>
#include <cstring>
#include <stdexcept>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "cupti.hpp"
#include "kernel_info.hpp"
#include "real_driver.hpp"
#include "recorder.hpp"
#include "task_description.hpp"

namespace nimble::hooks::program_graphs {
namespace {

struct KernelNode {
  KernelShape shape;
  std::vector<CUlaunchAttribute> attrs;  // the node's launch attributes nimble replays
  std::optional<std::vector<std::uint8_t>> args;
  std::size_t args_passed = SIZE_MAX;  // gather_arguments' `passed` (SIZE_MAX: all)
};

struct GraphSnapshot;

struct NodeSnapshot {
  CUgraphNode handle = nullptr;
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  bool enabled = true;
  KernelNode kernel;
  Fill fill{};
  CUDA_MEMCPY3D copy{};
  CUhostFn host = nullptr;
  CUevent event = nullptr;
  std::shared_ptr<GraphSnapshot> child;  // CU_GRAPH_NODE_TYPE_GRAPH
};

struct GraphSnapshot {
  CUgraph graph = nullptr;
  bool alive = true;  // false once the program destroyed the graph: its node handles are gone
  std::vector<NodeSnapshot> nodes;
  std::vector<std::vector<std::size_t>> preds;  // per node: the nodes it follows
};

// One executable graph as it will run; `lost` says why nimble no longer knows.
struct ExecState {
  std::shared_ptr<GraphSnapshot> graph;
  std::string lost;
};

std::mutex g_mu;
std::unordered_map<CUgraphExec, ExecState> g_execs;

template <class Pfn>
Pfn fn(const char* name, int version) {
  return driver_fn<Pfn>(name, version);
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(std::string(what) + " failed (" + std::to_string(r) + ")");
}

KernelNode kernel_node(const CUDA_KERNEL_NODE_PARAMS& p) {
  KernelNode k;
  k.shape.f = p.func ? p.func : reinterpret_cast<CUfunction>(p.kern);
  k.shape.grid[0] = p.gridDimX, k.shape.grid[1] = p.gridDimY, k.shape.grid[2] = p.gridDimZ;
  k.shape.block[0] = p.blockDimX, k.shape.block[1] = p.blockDimY, k.shape.block[2] = p.blockDimZ;
  k.shape.shared_mem = p.sharedMemBytes;
  if (k.shape.f) k.args = gather_arguments(kernel_info(k.shape.f), p.kernelParams, p.extra, &k.args_passed);
  return k;
}

// The attributes a replay must repeat (clusters, cooperative launches, priority); others
// (access policy windows, memory sync domains) change no result.
void read_attributes(CUgraphNode node, KernelNode& k) {
  using GetAttr = CUresult(CUDAAPI*)(CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue*);
  static const auto get = fn<GetAttr>("cuGraphKernelNodeGetAttribute", 11000);
  if (!get) return;
  for (CUlaunchAttributeID id : {CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
                                 CU_LAUNCH_ATTRIBUTE_PRIORITY}) {
    CUkernelNodeAttrValue value;
    std::memset(&value, 0, sizeof value);
    if (get(node, id, &value) != CUDA_SUCCESS) continue;
    const bool set = id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                         ? value.clusterDim.x * value.clusterDim.y * value.clusterDim.z > 1
                         : id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE ? value.cooperative != 0 : value.priority != 0;
    if (!set) continue;
    CUlaunchAttribute a;
    std::memset(&a, 0, sizeof a);
    a.id = id;
    a.value = value;
    k.attrs.push_back(a);
  }
}

Fill fill_of(const CUDA_MEMSET_NODE_PARAMS& p) {
  return Fill{p.dst, p.elementSize, p.value, p.width, p.height, p.height > 1 ? p.pitch : 0};
}

std::shared_ptr<GraphSnapshot> snapshot(CUgraph graph, int depth);

NodeSnapshot node_snapshot(CUgraphNode node, int depth) {
  using GetType = CUresult(CUDAAPI*)(CUgraphNode, CUgraphNodeType*);
  using KernelParams = CUresult(CUDAAPI*)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS*);
  using MemsetParams = CUresult(CUDAAPI*)(CUgraphNode, CUDA_MEMSET_NODE_PARAMS*);
  using MemcpyParams = CUresult(CUDAAPI*)(CUgraphNode, CUDA_MEMCPY3D*);
  using HostParams = CUresult(CUDAAPI*)(CUgraphNode, CUDA_HOST_NODE_PARAMS*);
  using ChildGraph = CUresult(CUDAAPI*)(CUgraphNode, CUgraph*);
  using NodeEvent = CUresult(CUDAAPI*)(CUgraphNode, CUevent*);
  NodeSnapshot n;
  n.handle = node;
  check(fn<GetType>("cuGraphNodeGetType", 10000)(node, &n.type), "cuGraphNodeGetType");
  switch (n.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS p;
      std::memset(&p, 0, sizeof p);
      check(fn<KernelParams>("cuGraphKernelNodeGetParams", 12000)(node, &p), "cuGraphKernelNodeGetParams");
      n.kernel = kernel_node(p);
      read_attributes(node, n.kernel);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS p;
      std::memset(&p, 0, sizeof p);
      check(fn<MemsetParams>("cuGraphMemsetNodeGetParams", 10000)(node, &p), "cuGraphMemsetNodeGetParams");
      n.fill = fill_of(p);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY:
      check(fn<MemcpyParams>("cuGraphMemcpyNodeGetParams", 10000)(node, &n.copy), "cuGraphMemcpyNodeGetParams");
      break;
    case CU_GRAPH_NODE_TYPE_HOST: {
      CUDA_HOST_NODE_PARAMS p{};
      check(fn<HostParams>("cuGraphHostNodeGetParams", 10000)(node, &p), "cuGraphHostNodeGetParams");
      n.host = p.fn;
      break;
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      CUgraph child = nullptr;
      check(fn<ChildGraph>("cuGraphChildGraphNodeGetGraph", 10000)(node, &child), "cuGraphChildGraphNodeGetGraph");
      n.child = snapshot(child, depth + 1);
      break;
    }
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
      check(fn<NodeEvent>("cuGraphEventRecordNodeGetEvent", 11010)(node, &n.event), "cuGraphEventRecordNodeGetEvent");
      break;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
      check(fn<NodeEvent>("cuGraphEventWaitNodeGetEvent", 11010)(node, &n.event), "cuGraphEventWaitNodeGetEvent");
      break;
    default:
      break;  // described as opaque work (describe_node)
  }
  return n;
}

std::shared_ptr<GraphSnapshot> snapshot(CUgraph graph, int depth) {
  if (depth > 16) throw std::runtime_error("child graphs nested more than 16 deep");
  using GetNodes = CUresult(CUDAAPI*)(CUgraph, CUgraphNode*, size_t*);
  using GetEdges2 = CUresult(CUDAAPI*)(CUgraph, CUgraphNode*, CUgraphNode*, CUgraphEdgeData*, size_t*);
  using GetEdges1 = CUresult(CUDAAPI*)(CUgraph, CUgraphNode*, CUgraphNode*, size_t*);
  auto get_nodes = fn<GetNodes>("cuGraphGetNodes", 10000);
  if (!get_nodes) throw std::runtime_error("the driver lacks cuGraphGetNodes");
  std::size_t count = 0;
  check(get_nodes(graph, nullptr, &count), "cuGraphGetNodes");
  std::vector<CUgraphNode> nodes(count);
  if (count) check(get_nodes(graph, nodes.data(), &count), "cuGraphGetNodes");
  nodes.resize(count);

  auto g = std::make_shared<GraphSnapshot>();
  g->graph = graph;
  std::unordered_map<CUgraphNode, std::size_t> index;
  for (CUgraphNode node : nodes) {
    index[node] = g->nodes.size();
    g->nodes.push_back(node_snapshot(node, depth));
  }
  g->preds.resize(g->nodes.size());

  // Every edge orders its two nodes completely (programmatic edges order less: more is sound).
  std::size_t edges = 0;
  std::vector<CUgraphNode> from, to;
  if (auto v2 = fn<GetEdges2>("cuGraphGetEdges", 12030)) {
    check(v2(graph, nullptr, nullptr, nullptr, &edges), "cuGraphGetEdges");
    from.resize(edges), to.resize(edges);
    std::vector<CUgraphEdgeData> data(edges);
    if (edges) check(v2(graph, from.data(), to.data(), data.data(), &edges), "cuGraphGetEdges");
  } else if (auto v1 = fn<GetEdges1>("cuGraphGetEdges", 10000)) {
    check(v1(graph, nullptr, nullptr, &edges), "cuGraphGetEdges");
    from.resize(edges), to.resize(edges);
    if (edges) check(v1(graph, from.data(), to.data(), &edges), "cuGraphGetEdges");
  } else {
    throw std::runtime_error("the driver lacks cuGraphGetEdges");
  }
  for (std::size_t e = 0; e < edges && e < from.size(); ++e) {
    auto f = index.find(from[e]), t = index.find(to[e]);
    if (f == index.end() || t == index.end()) throw std::runtime_error("cuGraphGetEdges named a node cuGraphGetNodes did not");
    g->preds[t->second].push_back(f->second);
  }
  return g;
}

NodeSnapshot* find(GraphSnapshot& g, CUgraphNode node) {
  for (NodeSnapshot& n : g.nodes) {
    if (n.handle == node) return &n;
    if (n.child) {
      if (NodeSnapshot* inner = find(*n.child, node)) return inner;
    }
  }
  return nullptr;
}

// Makes `exec` unknown (the first reason is kept); the caller holds g_mu.
void lose(CUgraphExec exec, const std::string& why) {
  auto it = g_execs.find(exec);
  if (it != g_execs.end() && it->second.lost.empty()) it->second.lost = why;
}

// Applies `change` to `node` of `exec`'s snapshot. An update of a node nimble did not see, or of
// a type not in `types` (empty: any type), makes the exec unknown.
template <class Change>
void update(CUgraphExec exec, CUgraphNode node, std::initializer_list<CUgraphNodeType> types, const char* api,
            Change change) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_execs.find(exec);
  if (it == g_execs.end() || !it->second.lost.empty()) return;
  NodeSnapshot* n = find(*it->second.graph, node);
  if (!n || (types.size() > 0 && std::find(types.begin(), types.end(), n->type) == types.end())) {
    it->second.lost = std::string(api) + " changed a node nimble did not see when the graph was instantiated";
    return;
  }
  try {
    change(*n);
  } catch (const std::exception& e) {
    it->second.lost = std::string(api) + ": " + e.what();
  }
}

void mark_dead(GraphSnapshot& g, CUgraph graph, bool parent_dead) {
  const bool dead = parent_dead || g.graph == graph;
  if (dead) g.alive = false;
  for (NodeSnapshot& n : g.nodes) {
    if (n.child) mark_dead(*n.child, graph, dead);  // embedded graphs go with their parent
  }
}

const char* opaque_reason(CUgraphNodeType type) {
  switch (type) {
    case CU_GRAPH_NODE_TYPE_CONDITIONAL: return "a conditional node (its body runs as often as the GPU decides)";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "a memory allocation node";
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return "a memory free node";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL: return "an external semaphore signal node";
    case CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT: return "an external semaphore wait node";
    case CU_GRAPH_NODE_TYPE_BATCH_MEM_OP: return "a batch memory operation node";
    default: return "a node of a type nimble does not know";
  }
}

// Flattening: each node of the snapshot becomes zero (empty, disabled), one, or many (a child
// graph) events; `ends[i]` are the events a successor of node i must follow.
class Flattener {
 public:
  // `exec_id`: CUPTI's id of the exec launched, when the window has CUPTI (node durations).
  Flattener(std::vector<deps::GraphNodeEvent>& out, std::optional<std::uint32_t> exec_id)
      : out_(out), exec_id_(exec_id) {}

  // Adds `g`'s nodes after `entry` (what its roots follow); returns its sinks' events.
  std::vector<std::size_t> add(const GraphSnapshot& g, const std::vector<std::size_t>& entry) {
    const std::vector<std::size_t> order = topological(g);
    std::vector<std::vector<std::size_t>> ends(g.nodes.size());
    std::vector<bool> has_successor(g.nodes.size(), false);
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      for (std::size_t p : g.preds[i]) has_successor[p] = true;
    }
    for (std::size_t i : order) {
      std::vector<std::size_t> before;
      for (std::size_t p : g.preds[i]) before.insert(before.end(), ends[p].begin(), ends[p].end());
      if (g.preds[i].empty()) before = entry;
      dedupe(before);
      ends[i] = node(g.nodes[i], g.alive, before);
    }
    std::vector<std::size_t> sinks;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      if (!has_successor[i]) sinks.insert(sinks.end(), ends[i].begin(), ends[i].end());
    }
    if (g.nodes.empty()) sinks = entry;
    dedupe(sinks);
    return sinks;
  }

 private:
  static void dedupe(std::vector<std::size_t>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }

  // Kahn's algorithm, lowest index first: the nodes keep the order the program added them in
  // wherever the edges allow.
  static std::vector<std::size_t> topological(const GraphSnapshot& g) {
    std::vector<std::size_t> order, indegree(g.nodes.size());
    std::vector<std::vector<std::size_t>> succ(g.nodes.size());
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      indegree[i] = g.preds[i].size();
      for (std::size_t p : g.preds[i]) succ[p].push_back(i);
    }
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      if (indegree[i] == 0) ready.push(i);
    }
    while (!ready.empty()) {
      const std::size_t i = ready.top();
      ready.pop();
      order.push_back(i);
      for (std::size_t s : succ[i]) {
        if (--indegree[s] == 0) ready.push(s);
      }
    }
    if (order.size() != g.nodes.size()) throw std::runtime_error("the graph's edges form a cycle");
    return order;
  }

  std::vector<std::size_t> node(const NodeSnapshot& n, bool alive, const std::vector<std::size_t>& before) {
    if (!n.enabled || n.type == CU_GRAPH_NODE_TYPE_EMPTY) return before;  // passes its order on
    if (n.type == CU_GRAPH_NODE_TYPE_GRAPH) return add(*n.child, before);
    deps::GraphNodeEvent e;
    e.preds = before;
    describe(n, e);
    // CUPTI names the node of each kernel record by this id (attach_cupti_results).
    if (n.type == CU_GRAPH_NODE_TYPE_KERNEL && alive && exec_id_) {
      if (auto id = cupti::graph_node_id(n.handle, *exec_id_)) e.task.detail["cupti_graph_node_id"] = *id;
    }
    out_.push_back(std::move(e));
    return {out_.size() - 1};
  }

  static void describe(const NodeSnapshot& n, deps::GraphNodeEvent& e) {
    deps::TaskEvent& t = e.task;
    switch (n.type) {
      case CU_GRAPH_NODE_TYPE_KERNEL: {
        t.kind = trace::TaskKind::Kernel;
        KernelShape shape = n.kernel.shape;
        shape.attrs = n.kernel.attrs.data();
        shape.num_attrs = static_cast<unsigned>(n.kernel.attrs.size());
        describe_kernel(shape, n.kernel.args, t, n.kernel.args_passed);
        break;
      }
      case CU_GRAPH_NODE_TYPE_MEMSET:
        t.kind = trace::TaskKind::Memset;
        describe_fill(n.fill, t);
        break;
      case CU_GRAPH_NODE_TYPE_MEMCPY:
        t.kind = trace::TaskKind::Memcpy;
        describe_copy_3d(n.copy, t);
        break;
      case CU_GRAPH_NODE_TYPE_HOST:
        // A host function runs in graph order and cannot call CUDA: its edges are its order.
        t.kind = trace::TaskKind::HostFunc;
        t.detail["function"] = hex_address(reinterpret_cast<std::uintptr_t>(n.host));
        break;
      case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
        t.kind = trace::TaskKind::EventRecord;
        t.detail["event"] = hex_address(reinterpret_cast<std::uintptr_t>(n.event));
        e.records.push_back(reinterpret_cast<deps::EventHandle>(n.event));
        break;
      case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
        t.kind = trace::TaskKind::EventWait;
        t.detail["event"] = hex_address(reinterpret_cast<std::uintptr_t>(n.event));
        e.waits.push_back(reinterpret_cast<deps::EventHandle>(n.event));
        break;
      default:
        // Work nimble cannot see into: one opaque task that touches everything.
        t.kind = trace::TaskKind::Graph;
        t.detail["opaque_because"] = opaque_reason(n.type);
        t.accesses.push_back({0, 0, deps::Access::ReadWrite, true});
        break;
    }
    t.detail["graph_node_handle"] = hex_address(reinterpret_cast<std::uintptr_t>(n.handle));
  }

  std::vector<deps::GraphNodeEvent>& out_;
  std::optional<std::uint32_t> exec_id_;
};

}  // namespace

void instantiated(CUgraphExec exec, CUgraph graph) {
  ExecState state;
  try {
    InternalScope internal;
    state.graph = snapshot(graph, 0);
  } catch (const std::exception& e) {
    state.lost = std::string("reading the graph at cuGraphInstantiate: ") + e.what();
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_execs[exec] = std::move(state);
}

void graph_destroyed(CUgraph graph) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto& [exec, state] : g_execs) {
    if (state.graph) mark_dead(*state.graph, graph, false);
  }
}

void destroyed(CUgraphExec exec) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_execs.erase(exec);
}

void updated(CUgraphExec exec, CUgraph graph) {
  // The exec now runs `graph`'s parameters, but later node updates name the nodes of the graph
  // it was instantiated from; nimble cannot pair those, so it stops describing this exec.
  (void)graph;
  std::lock_guard<std::mutex> lock(g_mu);
  lose(exec, "the program updated it with cuGraphExecUpdate");
}

void kernel_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS& params) {
  InternalScope internal;
  update(exec, node, {CU_GRAPH_NODE_TYPE_KERNEL}, "cuGraphExecKernelNodeSetParams", [&](NodeSnapshot& n) {
    std::vector<CUlaunchAttribute> attrs = std::move(n.kernel.attrs);  // attributes stay the node's
    n.kernel = kernel_node(params);
    n.kernel.attrs = std::move(attrs);
  });
}

void memset_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS& params) {
  update(exec, node, {CU_GRAPH_NODE_TYPE_MEMSET}, "cuGraphExecMemsetNodeSetParams",
         [&](NodeSnapshot& n) { n.fill = fill_of(params); });
}

void memcpy_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_MEMCPY3D& params) {
  update(exec, node, {CU_GRAPH_NODE_TYPE_MEMCPY}, "cuGraphExecMemcpyNodeSetParams",
         [&](NodeSnapshot& n) { n.copy = params; });
}

void child_node_set(CUgraphExec exec, CUgraphNode node, CUgraph child) {
  InternalScope internal;
  update(exec, node, {CU_GRAPH_NODE_TYPE_GRAPH}, "cuGraphExecChildGraphNodeSetParams",
         [&](NodeSnapshot& n) { n.child = snapshot(child, 1); });
}

void host_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_HOST_NODE_PARAMS& params) {
  update(exec, node, {CU_GRAPH_NODE_TYPE_HOST}, "cuGraphExecHostNodeSetParams",
         [&](NodeSnapshot& n) { n.host = params.fn; });
}

void event_node_set(CUgraphExec exec, CUgraphNode node, CUevent event) {
  update(exec, node, {CU_GRAPH_NODE_TYPE_EVENT_RECORD, CU_GRAPH_NODE_TYPE_WAIT_EVENT},
         "cuGraphExecEvent{Record,Wait}NodeSetEvent", [&](NodeSnapshot& n) { n.event = event; });
}

void node_enabled(CUgraphExec exec, CUgraphNode node, bool enabled) {
  update(exec, node, {}, "cuGraphNodeSetEnabled", [&](NodeSnapshot& n) { n.enabled = enabled; });
}

void node_set(CUgraphExec exec, CUgraphNode node, const CUgraphNodeParams& params) {
  switch (params.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      const CUDA_KERNEL_NODE_PARAMS_v3& k = params.kernel;
      CUDA_KERNEL_NODE_PARAMS p{k.func, k.gridDimX, k.gridDimY, k.gridDimZ, k.blockDimX, k.blockDimY, k.blockDimZ,
                                k.sharedMemBytes, k.kernelParams, k.extra, k.kern, k.ctx};
      kernel_node_set(exec, node, p);
      return;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      const auto& m = params.memset;
      CUDA_MEMSET_NODE_PARAMS p{m.dst, m.pitch, m.value, m.elementSize, m.width, m.height};
      memset_node_set(exec, node, p);
      return;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: memcpy_node_set(exec, node, params.memcpy.copyParams); return;
    case CU_GRAPH_NODE_TYPE_GRAPH: child_node_set(exec, node, params.graph.graph); return;
    case CU_GRAPH_NODE_TYPE_HOST: host_node_set(exec, node, {params.host.fn, params.host.userData}); return;
    case CU_GRAPH_NODE_TYPE_EVENT_RECORD: event_node_set(exec, node, params.eventRecord.event); return;
    case CU_GRAPH_NODE_TYPE_WAIT_EVENT: event_node_set(exec, node, params.eventWait.event); return;
    default: break;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  lose(exec, "cuGraphExecNodeSetParams changed a node of a type nimble does not follow");
}

bool describe_nodes(CUgraphExec exec, deps::TaskEvent& launch, std::string* why_not) {
  std::lock_guard<std::mutex> lock(g_mu);  // another thread may update the exec meanwhile
  auto it = g_execs.find(exec);
  if (it == g_execs.end()) {
    *why_not = "nimble did not see this graph instantiated";
    return false;
  }
  if (!it->second.lost.empty()) {
    *why_not = it->second.lost;
    return false;
  }
  try {
    Flattener(launch.graph_nodes, cupti::graph_exec_id(exec)).add(*it->second.graph, {});
  } catch (const std::exception& e) {
    launch.graph_nodes.clear();
    *why_not = e.what();
    return false;
  }
  return true;
}

}  // namespace nimble::hooks::program_graphs
