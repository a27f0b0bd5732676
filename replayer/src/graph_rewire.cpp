// libnimble_graph.so: the driver half of rewire.hpp behind the C API of nimble/nimble_graph.h.
// It remembers which operation each captured node came from (marks), reads a captured graph's
// nodes (kernel argument bytes, memset and copy extents), asks rewire::plan for the edges and
// replaces the graph's edges. The driver is resolved at run time through cuGetProcAddress, so the
// library needs no libcuda at link time and tests can hand it the fake driver.
#include "nimble/nimble_graph.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "nimble/replayer/kernel_arguments.hpp"
#include "nimble/replayer/rewire.hpp"
#include "nimble/trace/trace.hpp"

namespace rw = nimble::replayer::rewire;
using nimble::deps::Access;
using nimble::deps::MemAccess;
using nimble::deps::ParamLayout;

#define NIMBLE_GRAPH_DRIVER(X)                                                                       \
  X(capture_info, "cuStreamGetCaptureInfo", 12030, PFN_cuStreamGetCaptureInfo_v12030)                \
  X(get_nodes, "cuGraphGetNodes", 10000, PFN_cuGraphGetNodes_v10000)                                 \
  X(get_edges, "cuGraphGetEdges", 12030, PFN_cuGraphGetEdges_v12030)                                 \
  X(node_type, "cuGraphNodeGetType", 10000, PFN_cuGraphNodeGetType_v10000)                           \
  X(kernel_params, "cuGraphKernelNodeGetParams", 12000, PFN_cuGraphKernelNodeGetParams_v12000)       \
  X(memset_params, "cuGraphMemsetNodeGetParams", 10000, PFN_cuGraphMemsetNodeGetParams_v10000)       \
  X(memcpy_params, "cuGraphMemcpyNodeGetParams", 10000, PFN_cuGraphMemcpyNodeGetParams_v10000)       \
  X(func_param_info, "cuFuncGetParamInfo", 12040, PFN_cuFuncGetParamInfo_v12040)                    \
  X(pointer_attribute, "cuPointerGetAttribute", 4000, PFN_cuPointerGetAttribute_v4000)               \
  X(add_edges, "cuGraphAddDependencies", 12030, PFN_cuGraphAddDependencies_v12030)                   \
  X(remove_edges, "cuGraphRemoveDependencies", 12030, PFN_cuGraphRemoveDependencies_v12030)

// Optional: a CUkernel handle in a node (absent from older drivers and the fake one), and names
// for NIMBLE_GRAPH_DEBUG.
using KernelParamInfo = PFN_cuKernelGetParamInfo_v12040;
using FuncName = PFN_cuFuncGetName_v12030;
using KernelName = PFN_cuKernelGetName_v12030;

struct nimble_graph_session {
#define NIMBLE_GRAPH_FIELD(field, name, version, pfn) pfn field = nullptr;
  NIMBLE_GRAPH_DRIVER(NIMBLE_GRAPH_FIELD)
#undef NIMBLE_GRAPH_FIELD
  KernelParamInfo kernel_param_info = nullptr;
  FuncName func_name = nullptr;
  KernelName kernel_name = nullptr;
  bool debug = false;  // NIMBLE_GRAPH_DEBUG: every pointer nimble could only resolve to a whole allocation

  std::vector<std::vector<rw::Extent>> operations{{}};  // tensors of each operation; 0: unknown origin
  std::unordered_map<CUgraphNode, std::size_t> operation_of;
  std::unordered_map<CUgraph, std::size_t> nodes_marked;  // per capture graph
  std::map<std::uint64_t, std::uint64_t> ranges;   // driver allocations seen: start -> size
  std::unordered_set<std::uint64_t> not_memory;    // words the driver does not know
};

namespace {

void put(char* out, std::size_t size, const std::string& text) {
  if (out && size) std::snprintf(out, size, "%s", text.c_str());
}

std::string failed(const char* what, CUresult r) { return std::string(what) + " failed (CUresult " + std::to_string(r) + ")"; }

void check(const char* what, CUresult r) {
  if (r != CUDA_SUCCESS) throw std::runtime_error(failed(what, r));
}

bool load(nimble_graph_session& s, std::string& error) {
  const char* path = std::getenv("NIMBLE_LIBCUDA");
  void* lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    error = std::string("cannot load the CUDA driver: ") + dlerror();
    return false;
  }
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!get_proc) {
    error = "the CUDA driver has no cuGetProcAddress_v2 (driver older than CUDA 12)";
    return false;
  }
  auto lookup = [&](const char* name, int version) -> void* {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status;
    return get_proc(name, &fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS ? fn : nullptr;
  };
  std::string missing;
#define NIMBLE_GRAPH_LOAD(field, name, version, pfn)                    \
  s.field = reinterpret_cast<pfn>(lookup(name, version));              \
  if (!s.field) missing += (missing.empty() ? "" : ", ") + std::string(name);
  NIMBLE_GRAPH_DRIVER(NIMBLE_GRAPH_LOAD)
#undef NIMBLE_GRAPH_LOAD
  s.kernel_param_info = reinterpret_cast<KernelParamInfo>(lookup("cuKernelGetParamInfo", 12040));
  s.func_name = reinterpret_cast<FuncName>(lookup("cuFuncGetName", 12030));
  s.kernel_name = reinterpret_cast<KernelName>(lookup("cuKernelGetName", 12030));
  const char* debug = std::getenv("NIMBLE_GRAPH_DEBUG");
  s.debug = debug && *debug && std::string(debug) != "0";
  if (!missing.empty()) {
    error = "the CUDA driver lacks " + missing + " (CUDA 12.4 or newer is needed)";
    return false;
  }
  return true;
}

std::optional<rw::Range> driver_range(nimble_graph_session& s, std::uint64_t word) {
  if (word < 0x10000 || s.not_memory.count(word)) return std::nullopt;
  auto it = s.ranges.upper_bound(word);
  if (it != s.ranges.begin() && word - std::prev(it)->first < std::prev(it)->second) {
    --it;
    return rw::Range{it->first, it->second};
  }
  CUdeviceptr start = 0;
  std::size_t size = 0;
  if (s.pointer_attribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, word) != CUDA_SUCCESS ||
      s.pointer_attribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, word) != CUDA_SUCCESS || size == 0) {
    s.not_memory.insert(word);
    return std::nullopt;
  }
  s.ranges[start] = size;
  return rw::Range{start, size};
}

std::vector<ParamLayout> param_layout(nimble_graph_session& s, const CUDA_KERNEL_NODE_PARAMS& p, bool* known) {
  std::vector<ParamLayout> out;
  *known = false;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (p.func) {
      r = s.func_param_info(p.func, i, &offset, &size);
    } else if (p.kern && s.kernel_param_info) {
      r = s.kernel_param_info(p.kern, i, &offset, &size);
    }
    if (r != CUDA_SUCCESS) {
      // The first index past the last parameter is an invalid value; anything else: unknown.
      *known = r == CUDA_ERROR_INVALID_VALUE;
      return out;
    }
    out.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
  }
}

MemAccess everything() { return {0, 0, Access::ReadWrite, true}; }

// One side of a copy as a byte range, or nullopt for arrays (nimble cannot see their memory).
std::optional<MemAccess> copy_side(CUmemorytype type, CUdeviceptr device, const void* host, std::size_t x,
                                   std::size_t y, std::size_t z, std::size_t pitch, std::size_t height,
                                   const CUDA_MEMCPY3D& c, Access mode) {
  std::uint64_t base = 0;
  if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_UNIFIED) {
    base = device;
  } else if (type == CU_MEMORYTYPE_HOST) {
    base = reinterpret_cast<std::uintptr_t>(host);
  } else {
    return std::nullopt;
  }
  const std::size_t row = pitch ? pitch : c.WidthInBytes;
  const std::size_t rows = height ? height : c.Height;
  const std::uint64_t first = base + (z * rows + y) * row + x;
  const std::uint64_t last = base + ((z + c.Depth - 1) * rows + (y + c.Height - 1)) * row + x + c.WidthInBytes;
  return MemAccess{first, last - first, mode, false};
}

rw::Node read_node(nimble_graph_session& s, CUgraphNode handle, rw::PointerCounts& counts, std::size_t* without_op) {
  CUgraphNodeType type;
  check("cuGraphNodeGetType", s.node_type(handle, &type));
  rw::Node node;
  if (auto op = s.operation_of.find(handle); op != s.operation_of.end()) node.operation = op->second;
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS p{};
      check("cuGraphKernelNodeGetParams", s.kernel_params(handle, &p));
      bool known = false;
      const std::vector<ParamLayout> layout = param_layout(s, p, &known);
            // Without the layout the pointers in the bytes cannot be found: the node touches everything.
      const auto bytes = known ? nimble::replayer::kernel_argument_bytes(layout, known, p.kernelParams, p.extra)
                               : std::nullopt;
      node.kind = rw::NodeKind::Kernel;
      if (!bytes) {
        node.accesses.push_back(everything());
        break;
      }
      auto op = s.operation_of.find(handle);
      if (op == s.operation_of.end() || op->second == 0) ++*without_op;
      const std::size_t op_index = op == s.operation_of.end() ? 0 : op->second;
      const auto& extents = s.operations[op_index];
      node.accesses = rw::kernel_accesses(*bytes, layout, extents, [&](std::uint64_t w) {
        auto range = driver_range(s, w);
        if (range && s.debug) {
          const char* name = "?";
          if (p.func && s.func_name) s.func_name(&name, p.func);
          else if (p.kern && s.kernel_name) s.kernel_name(&name, p.kern);
          std::fprintf(stderr, "nimble-graph: operation %zu kernel %.80s: 0x%llx only in allocation 0x%llx+%llu\n",
                       op_index, name, static_cast<unsigned long long>(w), static_cast<unsigned long long>(range->addr),
                       static_cast<unsigned long long>(range->size));
          for (const rw::Extent& e : extents) {
            std::fprintf(stderr, "nimble-graph:   operation tensor 0x%llx+%llu%s\n", static_cast<unsigned long long>(e.addr),
                         static_cast<unsigned long long>(e.size), e.written ? " written" : "");
          }
        }
        return range;
      }, &counts);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS p{};
      check("cuGraphMemsetNodeGetParams", s.memset_params(handle, &p));
      node.kind = rw::NodeKind::Memset;
      const std::uint64_t row = p.pitch ? p.pitch : p.width * p.elementSize;
      node.accesses.push_back({p.dst, row * (p.height ? p.height - 1 : 0) + p.width * p.elementSize, Access::Write, false});
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      CUDA_MEMCPY3D c{};
      check("cuGraphMemcpyNodeGetParams", s.memcpy_params(handle, &c));
      node.kind = rw::NodeKind::Memcpy;
      auto src = copy_side(c.srcMemoryType, c.srcDevice, c.srcHost, c.srcXInBytes, c.srcY, c.srcZ, c.srcPitch,
                           c.srcHeight, c, Access::Read);
      auto dst = copy_side(c.dstMemoryType, c.dstDevice, c.dstHost, c.dstXInBytes, c.dstY, c.dstZ, c.dstPitch,
                           c.dstHeight, c, Access::Write);
      if (src && dst) {
        node.accesses = {*src, *dst};
      } else {
        node.accesses.push_back(everything());
      }
      break;
    }
    default:  // events, host functions, empty joins, child graphs, ...: keep all order around them
      node.kind = rw::NodeKind::Other;
      node.accesses.push_back(everything());
  }
  return node;
}

struct Edges {
  std::vector<CUgraphNode> from, to;
  std::vector<CUgraphEdgeData> data;
};

Edges graph_edges(nimble_graph_session& s, CUgraph graph) {
  Edges e;
  std::size_t n = 0;
  check("cuGraphGetEdges", s.get_edges(graph, nullptr, nullptr, nullptr, &n));
  e.from.resize(n), e.to.resize(n), e.data.resize(n);
  if (n) check("cuGraphGetEdges", s.get_edges(graph, e.from.data(), e.to.data(), e.data.data(), &n));
  return e;
}

// The nodes in a topological order of the captured edges, ties kept in the driver's order (the
// order of capture).
std::vector<CUgraphNode> capture_order(nimble_graph_session& s, CUgraph graph, const Edges& edges) {
  std::size_t n = 0;
  check("cuGraphGetNodes", s.get_nodes(graph, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  if (n) check("cuGraphGetNodes", s.get_nodes(graph, nodes.data(), &n));
  std::unordered_map<CUgraphNode, std::size_t> position;
  for (std::size_t i = 0; i < n; ++i) position[nodes[i]] = i;
  std::vector<std::vector<std::size_t>> successors(n);
  std::vector<std::size_t> waiting(n, 0);
  for (std::size_t i = 0; i < edges.from.size(); ++i) {
    successors[position.at(edges.from[i])].push_back(position.at(edges.to[i]));
    ++waiting[position.at(edges.to[i])];
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (!waiting[i]) ready.push(i);
  }
  std::vector<CUgraphNode> order;
  while (!ready.empty()) {
    const std::size_t v = ready.top();
    ready.pop();
    order.push_back(nodes[v]);
    for (std::size_t w : successors[v]) {
      if (!--waiting[w]) ready.push(w);
    }
  }
  if (order.size() != n) throw std::runtime_error("the captured graph has a cycle");
  return order;
}

nimble::trace::json rewire(nimble_graph_session& s, CUgraph graph, const rw::WiringSpec& wiring) {
  const Edges before = graph_edges(s, graph);
  const std::vector<CUgraphNode> order = capture_order(s, graph, before);
  rw::PointerCounts counts;
  std::size_t without_op = 0;
  std::vector<rw::Node> nodes;
  nodes.reserve(order.size());
  std::map<std::string, std::size_t> kinds;
  for (CUgraphNode handle : order) {
    nodes.push_back(read_node(s, handle, counts, &without_op));
    ++kinds[rw::node_kind_name(nodes.back().kind)];
  }
  const rw::Rewiring plan = rw::plan(nodes, wiring);
  // Programmatic edges (programmatic dependent launch, from cuBLAS/cuDNN) stay programmatic where
  // the new wiring keeps the same pair of nodes (rw::same_pairs says why that is safe); any
  // other new edge is a full one.
  std::unordered_map<CUgraphNode, std::uint32_t> index_of;
  for (std::size_t i = 0; i < order.size(); ++i) index_of[order[i]] = static_cast<std::uint32_t>(i);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> captured;
  std::size_t programmatic = 0, kept = 0;
  for (std::size_t i = 0; i < before.from.size(); ++i) {
    captured.emplace_back(index_of.at(before.from[i]), index_of.at(before.to[i]));
    const CUgraphEdgeData& d = before.data[i];
    if (d.type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || d.from_port || d.to_port) ++programmatic;
  }
  const std::vector<std::ptrdiff_t> same = rw::same_pairs(plan.edges, captured);
  Edges after;
  for (std::size_t i = 0; i < plan.edges.size(); ++i) {
    after.from.push_back(order[plan.edges[i].first]);
    after.to.push_back(order[plan.edges[i].second]);
    CUgraphEdgeData d{};
    if (same[i] >= 0) {
      d = before.data[static_cast<std::size_t>(same[i])];
      if (d.type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || d.from_port || d.to_port) ++kept;
    }
    after.data.push_back(d);
  }
  if (!before.from.empty()) {
    check("cuGraphRemoveDependencies",
          s.remove_edges(graph, before.from.data(), before.to.data(), before.data.data(), before.from.size()));
  }
  if (!after.from.empty()) {
    const CUresult r = s.add_edges(graph, after.from.data(), after.to.data(), after.data.data(), after.from.size());
    if (r != CUDA_SUCCESS) {
      if (!before.from.empty()) s.add_edges(graph, before.from.data(), before.to.data(), before.data.data(), before.from.size());
      throw std::runtime_error(failed("cuGraphAddDependencies", r) + "; the captured edges were put back");
    }
  }
  return {{"wiring", rw::wiring_name(wiring)},
          {"nodes", nodes.size()},
          {"node_kinds", kinds},
          {"captured_edges", before.from.size()},
          {"programmatic_edges_kept", kept},
          {"programmatic_edges_dropped", programmatic - kept},
          {"dependencies", plan.dependencies},
          {"reduced_dependencies", plan.reduced},
          {"edges", plan.edges.size()},
          {"streams", plan.streams},
          {"syncs", plan.syncs},
          {"longest_path_nodes", plan.longest_path},
          {"pointers_in_operation_tensors", counts.in_operation_tensors},
          {"pointers_whole_allocation", counts.whole_allocations},
          {"kernels_without_operation", without_op}};
}

}  // namespace

extern "C" {

nimble_graph_session* nimble_graph_session_new(char* error, size_t error_size) {
  auto* s = new nimble_graph_session;
  std::string why;
  if (!load(*s, why)) {
    put(error, error_size, why);
    delete s;
    return nullptr;
  }
  return s;
}

void nimble_graph_session_free(nimble_graph_session* session) { delete session; }

int nimble_graph_mark(nimble_graph_session* s, uint64_t stream, size_t count, const uint64_t* addresses,
                      const uint64_t* sizes, const uint8_t* written, char* error, size_t error_size) {
  try {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph graph = nullptr;
    check("cuStreamGetCaptureInfo",
          s->capture_info(reinterpret_cast<CUstream>(stream), &status, nullptr, &graph, nullptr, nullptr, nullptr));
    if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || !graph) {
      throw std::runtime_error("the stream is not being captured");
    }
    std::size_t n = 0;
    check("cuGraphGetNodes", s->get_nodes(graph, nullptr, &n));
    std::size_t& known = s->nodes_marked[graph];
    if (n == known) return 0;  // the operation captured nothing
    std::vector<CUgraphNode> nodes(n);
    if (n) check("cuGraphGetNodes", s->get_nodes(graph, nodes.data(), &n));
    const std::size_t op = count ? s->operations.size() : 0;
    std::size_t fresh = 0;
    // New nodes are normally the last ones: look from the end until all are found.
    for (std::size_t i = n; i-- > 0 && known < n;) {
      if (s->operation_of.emplace(nodes[i], op).second) ++known, ++fresh;
    }
    if (count) {
      std::vector<rw::Extent> tensors;
      for (std::size_t i = 0; i < count; ++i) {
        if (sizes[i]) tensors.push_back({addresses[i], sizes[i], written[i] != 0});
      }
      s->operations.push_back(std::move(tensors));
    }
    return static_cast<int>(std::min<std::size_t>(fresh, INT32_MAX));
  } catch (const std::exception& e) {
    put(error, error_size, e.what());
    return -1;
  }
}

int nimble_graph_rewire(nimble_graph_session* s, uint64_t graph, const char* wiring, char* report,
                        size_t report_size) {
  try {
    const auto w = rw::parse_wiring(wiring ? wiring : "");
    if (!w) throw std::runtime_error(std::string("unknown wiring '") + (wiring ? wiring : "") +
                                     "' (expected reduced, schedule, schedule:K for at most K streams, or chain)");
    const std::string text = rewire(*s, reinterpret_cast<CUgraph>(graph), *w).dump();
    if (text.size() + 1 > report_size) throw std::runtime_error("the report buffer is too small");
    put(report, report_size, text);
    return 0;
  } catch (const std::exception& e) {
    put(report, report_size, e.what());
    return -1;
  }
}

}  // extern "C"
