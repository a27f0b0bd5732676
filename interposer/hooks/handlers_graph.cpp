// The program's own graphs: instantiation and the exec-level updates that change what a launch
// runs, forwarded to program_graphs so a recorded launch shows its nodes.
#include "handlers.hpp"
#include "program_graphs.hpp"
#include "recorder.hpp"

namespace nimble::hooks {
namespace {

// Calls the real function; on success, and when the call is the program's, tells the graphs.
template <class Call, class Then>
CUresult forward_then(Call&& call, Then&& then) {
  const CUresult r = call();
  if (r == CUDA_SUCCESS && !inside_nimble()) then();
  return r;
}

}  // namespace

CUresult on_graph_instantiate_with_flags(H, PFN_cuGraphInstantiateWithFlags_v11040 real, CUgraphExec* exec,
                                         CUgraph graph, unsigned long long flags) {
  return forward_then([&] { return real(exec, graph, flags); },
                      [&] { program_graphs::instantiated(*exec, graph); });
}

CUresult on_graph_instantiate_with_params(H, PFN_cuGraphInstantiateWithParams_v12000 real, CUgraphExec* exec,
                                          CUgraph graph, CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return forward_then([&] { return real(exec, graph, params); },
                      [&] { program_graphs::instantiated(*exec, graph); });
}

CUresult on_graph_exec_destroy(H, PFN_cuGraphExecDestroy_v10000 real, CUgraphExec exec) {
  return forward_then([&] { return real(exec); }, [&] { program_graphs::destroyed(exec); });
}

CUresult on_graph_destroy(H, PFN_cuGraphDestroy_v10000 real, CUgraph graph) {
  // Before the call: afterwards the handle may already name a new graph.
  if (!inside_nimble()) program_graphs::graph_destroyed(graph);
  return real(graph);
}

CUresult on_graph_exec_update(H, PFN_cuGraphExecUpdate_v12000 real, CUgraphExec exec, CUgraph graph,
                              CUgraphExecUpdateResultInfo* info) {
  return forward_then([&] { return real(exec, graph, info); }, [&] { program_graphs::updated(exec, graph); });
}

CUresult on_graph_exec_kernel_node_set_params(H, PFN_cuGraphExecKernelNodeSetParams_v12000 real, CUgraphExec exec,
                                              CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS* params) {
  return forward_then([&] { return real(exec, node, params); },
                      [&] { program_graphs::kernel_node_set(exec, node, *params); });
}

CUresult on_graph_exec_memset_node_set_params(H, PFN_cuGraphExecMemsetNodeSetParams_v10020 real, CUgraphExec exec,
                                              CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS* params,
                                              CUcontext ctx) {
  return forward_then([&] { return real(exec, node, params, ctx); },
                      [&] { program_graphs::memset_node_set(exec, node, *params); });
}

CUresult on_graph_exec_memcpy_node_set_params(H, PFN_cuGraphExecMemcpyNodeSetParams_v10020 real, CUgraphExec exec,
                                              CUgraphNode node, const CUDA_MEMCPY3D* params, CUcontext ctx) {
  return forward_then([&] { return real(exec, node, params, ctx); },
                      [&] { program_graphs::memcpy_node_set(exec, node, *params); });
}

CUresult on_graph_exec_child_graph_node_set_params(H, PFN_cuGraphExecChildGraphNodeSetParams_v11010 real,
                                                   CUgraphExec exec, CUgraphNode node, CUgraph child) {
  return forward_then([&] { return real(exec, node, child); },
                      [&] { program_graphs::child_node_set(exec, node, child); });
}

CUresult on_graph_exec_host_node_set_params(H, PFN_cuGraphExecHostNodeSetParams_v10020 real, CUgraphExec exec,
                                            CUgraphNode node, const CUDA_HOST_NODE_PARAMS* params) {
  return forward_then([&] { return real(exec, node, params); },
                      [&] { program_graphs::host_node_set(exec, node, *params); });
}

CUresult on_graph_exec_event_node_set_event(H, PFN_cuGraphExecEventRecordNodeSetEvent_v11010 real,
                                            CUgraphExec exec, CUgraphNode node, CUevent event) {
  return forward_then([&] { return real(exec, node, event); },
                      [&] { program_graphs::event_node_set(exec, node, event); });
}

CUresult on_graph_node_set_enabled(H, PFN_cuGraphNodeSetEnabled_v11060 real, CUgraphExec exec, CUgraphNode node,
                                   unsigned enabled) {
  return forward_then([&] { return real(exec, node, enabled); },
                      [&] { program_graphs::node_enabled(exec, node, enabled != 0); });
}

CUresult on_graph_exec_node_set_params(H, PFN_cuGraphExecNodeSetParams_v12020 real, CUgraphExec exec,
                                       CUgraphNode node, CUgraphNodeParams* params) {
  return forward_then([&] { return real(exec, node, params); },
                      [&] { program_graphs::node_set(exec, node, *params); });
}

}  // namespace nimble::hooks
