// Host-only library queries whose answers `nimble run` keeps: PyTorch asks cuBLASLt for its
// heuristics before every cublasLtMatmul (about 40 us each on the H100 machine, 49 times per
// ViT-B/16 inference), with the same descriptors every iteration. The answer depends only on the
// handle, the descriptors' contents (followed from the program's calls, library_keys.hpp) and the
// count asked for; it is kept once two calls with the same inputs gave the same answer, and
// handed back from then on. Only inside a replayed iteration (remembers_queries_now): otherwise
// calls pass through, as without nimble.
#pragma once

#include <cstddef>

#include "library_keys.hpp"

namespace nimble::hooks {

// Whether a query is answered from memory now: only inside an iteration nimble run replays (not
// in a plain block of a trial or --compare, not between iterations, not while every recording
// rests). Elsewhere nimble run must cost what the idle library costs. (HF generate answered 247
// a call from memory while resting; answering only inside replayed iterations did not close its
// 2-4% gap to plain, so they were not its cause: docs/benchmarks/generate-h200-nov28.)
constexpr bool remembers_queries_now(bool running, bool replaying_iteration, bool plain_phase, bool skip_library) {
  return library_call_may_be_taken(running, replaying_iteration, plain_phase) && skip_library;
}

using AlgoGetHeuristicFn = decltype(&cublasLtMatmulAlgoGetHeuristic);
cublasStatus_t remembered_cublasLtMatmulAlgoGetHeuristic(AlgoGetHeuristicFn real, cublasLtHandle_t handle,
                                                         cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                                                         cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                                         cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t preference,
                                                         int requested, cublasLtMatmulHeuristicResult_t results[],
                                                         int* returned);

struct QueryStats {
  std::size_t answered = 0;     // calls answered from what was kept
  std::size_t asked = 0;        // calls that went to the library
  std::size_t unstable = 0;     // inputs whose answers differed between two calls (never kept)
};
QueryStats query_stats();

}  // namespace nimble::hooks
