// CUPTI, loaded only while a capture window is open: an independent count of kernel launches
// (the coverage reference), correlation ids of the driver calls the wrappers make, and the
// activity records that give each task its GPU start time and duration.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

namespace nimble::hooks::cupti {

// The correlation id CUPTI gave the driver call this thread made last (0 if none); the wrappers
// clear it before the real call and take it right after.
void clear_correlation();
std::uint32_t take_correlation();

// Opens the window: loads libcupti (once), counts launches, enables activity records.
// Returns false with the reason when CUPTI cannot be used; recording goes on without it.
bool start(std::string* why_not);

// The automatic range decides that a window began only after its first task was issued, so it
// starts CUPTI early (when a period is found) and, once the window is open, restarts the counts
// from that first task: `first_correlation` is its correlation id (0 if CUPTI did not see it),
// `first_is_kernel` whether it was a kernel launch.
void restart_counts(std::uint32_t first_correlation, bool first_is_kernel);

// Closes the window. With `flush`, waits for the GPU and collects the activity records
// (never at process exit, when the driver may already be gone), then detaches CUPTI from the
// process at the exit of the next driver call (cuptiFinalize): an attached CUPTI slows the
// program's launches for the rest of the process. CUPTI is not started again afterwards.
void stop(bool flush);

struct Timing {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
};

std::uint64_t kernel_launches();   // kernel launch calls CUPTI saw inside the window
std::uint64_t kernel_records();    // kernel activity records collected for the window
// Kernels that ran as nodes of graph launches inside the window (CUPTI has no launch callback
// for them: the coverage reference counts their activity records).
std::uint64_t graph_kernel_records();
std::unordered_map<std::uint32_t, Timing> timings();  // by correlation id

// CUPTI's id of an executable graph, while the window is open (nullopt otherwise).
std::optional<std::uint32_t> graph_exec_id(CUgraphExec exec);
// The id the kernel records of launches of the exec `exec_id` give the node `node` of the graph
// it was instantiated from.
std::optional<std::uint64_t> graph_node_id(CUgraphNode node, std::uint32_t exec_id);
// The times of the kernel node `node_id` in the graph launch with that correlation id.
std::optional<Timing> graph_node_timing(std::uint32_t launch_correlation, std::uint64_t node_id);

}  // namespace nimble::hooks::cupti
