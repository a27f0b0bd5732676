// Fewer streams without losing concurrency: chains totally ordered by the DAG share a stream.
#pragma once

#include <cstddef>

#include "nimble/scheduler/chains.hpp"

namespace nimble::scheduler {

struct ChainMergeOptions {
  // Chain A may precede chain B on a stream when A's tail reaches B's head. For each head only the
  // latest-ending reaching tails are kept as candidates (0 = all of them: exact, but the candidate
  // graph can grow quadratically in the number of chains).
  std::size_t candidates_per_chain = 64;
  std::size_t memory_per_pass = std::size_t{64} << 20;  // bytes of reach sets
};

struct ChainMerge {
  StreamAssignment assignment;
  std::size_t candidate_pairs = 0;  // edges of the chain graph given to the matching
  std::size_t capped_heads = 0;     // heads that had more reaching tails than candidates_per_chain
};

// Streams made of chains concatenated end to end; every pair of tasks on one stream is ordered by
// the DAG. With candidates uncapped the stream count is minimal for concatenations of these chains
// (chains - maximum matching of the "tail reaches head" graph).
ChainMerge merge_chains(const Adjacency& meg_predecessors, const ChainCover& cover,
                        const ChainMergeOptions& options = {});

}  // namespace nimble::scheduler
