// Chains (sequences of tasks linked by matched MEG edges) and stream assignments.
#pragma once

#include <cstdint>
#include <vector>

#include "nimble/scheduler/dag.hpp"
#include "nimble/scheduler/matching.hpp"

namespace nimble::scheduler {

// Each chain lists ascending nodes, each an MEG successor of the one before. Chains are ordered by
// their first node; chain_of[v] is the chain holding node v.
struct ChainCover {
  std::vector<std::vector<NodeIndex>> chains;
  std::vector<std::uint32_t> chain_of;
};

// Which stream every node runs on. Streams are numbered 0..streams-1 in order of their first node.
struct StreamAssignment {
  std::vector<std::uint32_t> stream_of;
  std::uint32_t streams = 0;
};

// The chains of a matching on MEG edges, where right_of_left[u] = v means "v follows u".
// There are N - matching.size chains.
ChainCover chains_from_matching(const Matching& matching);

// The paper's basic schedule: every chain on its own stream.
StreamAssignment one_stream_per_chain(const ChainCover& cover);

// Renumbers stream labels (any values) densely in order of each stream's first node.
void renumber_streams(StreamAssignment& assignment);

// The previous node on the same stream, or kNoNode.
std::vector<NodeIndex> stream_predecessors(const StreamAssignment& assignment);

}  // namespace nimble::scheduler
