// The program's own CUDA graphs (XLA command buffers, torch.cuda.graph, torch.compile's
// reduce-overhead mode) as they will run, so a launch inside the recording window is recorded
// node by node instead of as one opaque task.
//
// A graph is read when it is instantiated (its nodes, parameters and edges; child graphs
// included), and that snapshot is kept per executable graph: later changes to the graph do not
// reach an executable graph, while the exec-level updates the program makes do (XLA updates the
// kernel, memset, memcpy and child nodes of its command buffers in place), so they are applied
// to the snapshot. Anything nimble cannot follow (an update of a node it did not see, a node
// type whose work it cannot describe) is remembered, and the launch is then recorded as an
// opaque "graph" task with the reason.
#pragma once

#include <cuda.h>

#include <string>

#include "deps/engine.hpp"

namespace nimble::hooks::program_graphs {

void instantiated(CUgraphExec exec, CUgraph graph);
void destroyed(CUgraphExec exec);
void graph_destroyed(CUgraph graph);
void updated(CUgraphExec exec, CUgraph graph);  // cuGraphExecUpdate
void kernel_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS& params);
void memset_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_MEMSET_NODE_PARAMS& params);
void memcpy_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_MEMCPY3D& params);
void child_node_set(CUgraphExec exec, CUgraphNode node, CUgraph child);
void host_node_set(CUgraphExec exec, CUgraphNode node, const CUDA_HOST_NODE_PARAMS& params);
void event_node_set(CUgraphExec exec, CUgraphNode node, CUevent event);
void node_enabled(CUgraphExec exec, CUgraphNode node, bool enabled);
// cuGraphExecNodeSetParams: the typed forms above where nimble knows the type.
void node_set(CUgraphExec exec, CUgraphNode node, const CUgraphNodeParams& params);

// Fills `launch.graph_nodes` with the nodes `exec` runs now. False, with the reason, when nimble
// does not know what it runs.
bool describe_nodes(CUgraphExec exec, deps::TaskEvent& launch, std::string* why_not);

}  // namespace nimble::hooks::program_graphs
