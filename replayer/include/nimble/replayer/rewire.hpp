// Rewiring a framework's captured CUDA graph (torch.cuda.graph and the like): the graph the
// framework captured on one stream is a chain; its nodes are kept (and with them the framework's
// memory, RNG state and replay), only its edges are replaced by the dependencies nimble infers
// from memory, so independent work runs concurrently. CUDA-free: the decisions live here and are
// tested in CI; graph_rewire.cpp reads and writes the graph through the driver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deps/engine.hpp"

namespace nimble::replayer::rewire {

// What a node of the captured graph is, as far as ordering goes: kernels, copies and memsets
// whose memory is known are ordered by memory conflicts alone; every other node (events, host
// nodes, empty joins, kernels whose arguments cannot be read) keeps all order around it.
enum class NodeKind { Kernel, Memcpy, Memset, Other };
// "kernel", "memcpy", "memset", "other": the names in reports, and the engine's task kinds (only
// the first three are ordered by memory alone).
const char* node_kind_name(NodeKind kind);

struct Node {
  NodeKind kind = NodeKind::Other;
  std::vector<deps::MemAccess> accesses;  // an `everything` access makes it keep all order
  // The operation that launched it (0: unknown). Nodes of one operation keep their order (they
  // share temporaries nimble only knows as whole allocations; the order costs little).
  std::size_t operation = 0;
};

// A tensor the framework told nimble about: the storage of an argument or a result of the
// operation that launched a node (its extent is exact, and the operation's schema says whether
// it writes it).
struct Extent {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
  bool written = false;
};

// The driver's allocation containing an address (cuPointerGetAttribute's range), or nullopt
// when the address is no memory the driver knows (then the word is a scalar, not a pointer).
struct Range {
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
};
using RangeLookup = std::function<std::optional<Range>(std::uint64_t address)>;

struct PointerCounts {
  std::size_t in_operation_tensors = 0;  // resolved to a tensor of the node's operation
  std::size_t whole_allocations = 0;     // resolved only to the driver's allocation (read-write)
};

// The memory a kernel touches, from its argument bytes: every 8-byte aligned word inside a
// parameter that lies in one of `operation` (the launching operation's tensors) is an access of
// that tensor (read, or read-write when the operation writes it); any other word the driver
// knows as memory is an access of that whole allocation, read-write (the operation's workspace
// or temporary, or memory reached by a pointer nimble cannot attribute: never guess an extent).
std::vector<deps::MemAccess> kernel_accesses(const std::vector<std::uint8_t>& args,
                                             const std::vector<deps::ParamLayout>& params,
                                             const std::vector<Extent>& operation,
                                             const RangeLookup& lookup, PointerCounts* counts);

// How the new edges are chosen.
//  * Chain: the capture order (what the framework captured; for comparison).
//  * Reduced: the inferred dependencies after transitive reduction (the driver maps them).
//  * Schedule: the Nimble algorithm's streams (scheduler/schedule.hpp) as edges: each node after
//    the previous node of its stream and after the nodes it waits for.
enum class Wiring { Chain, Reduced, Schedule };
const char* wiring_name(Wiring wiring);

// A wiring and, for Schedule, at most how many streams (0: as many as the concurrency asks).
// Every fork and join of a graph costs the driver host time at each launch: DenseNet-121's
// training step wired from all its dependencies took 1.6 ms of CPU per launch against 0.14 ms
// for the chain, and 17 ms back to back (the GPU needs 8), so fewer streams can be faster.
struct WiringSpec {
  Wiring wiring = Wiring::Reduced;
  std::uint32_t max_streams = 0;
  friend bool operator==(const WiringSpec&, const WiringSpec&) = default;
};
// "chain", "reduced", "schedule", or "schedule:K" (K from 1 to 1024 streams).
std::string wiring_name(const WiringSpec& spec);
std::optional<WiringSpec> parse_wiring(std::string_view name);

// The new edges of a captured graph, and what they cost.
struct Rewiring {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;  // (from, to) node indices, from < to
  std::size_t dependencies = 0;     // inferred edges before reduction
  std::size_t reduced = 0;          // after transitive reduction
  std::size_t streams = 1;          // Schedule: streams; others: the width the edges allow is not counted
  std::size_t syncs = 0;            // Schedule: cross-stream waits
  std::size_t longest_path = 0;     // nodes on the longest path of the reduced dependencies
};

// For each new edge, the index in `captured` of the captured edge between the same two nodes, or
// -1. A captured programmatic edge (programmatic dependent launch: cuBLAS and cuDNN kernels
// start their prologue while the kernel before them finishes) that the new wiring keeps between
// the same nodes keeps its kind: the second kernel waits for the first exactly as in the capture,
// and every other edge into it is a full one, which only orders it more. (In the captured chain
// every path from the first node passed through that edge, so nothing that relied on it loses
// an order it had.) Measured on the H100: no change in replay times (the captured chain still
// replays 2-10% slower than PyTorch's own graph of the same model, with or without per-operation
// memory pools: scripts/gpu/isolation_probe.py; the batch-1 captures measured have no
// programmatic edges at all).
std::vector<std::ptrdiff_t> same_pairs(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges,
                                       const std::vector<std::pair<std::uint32_t, std::uint32_t>>& captured);

// Nodes in capture order (a topological order of the captured graph). Throws
// std::invalid_argument for an empty graph.
Rewiring plan(const std::vector<Node>& nodes, const WiringSpec& wiring);
inline Rewiring plan(const std::vector<Node>& nodes, Wiring wiring) { return plan(nodes, WiringSpec{wiring, 0}); }

}  // namespace nimble::replayer::rewire
