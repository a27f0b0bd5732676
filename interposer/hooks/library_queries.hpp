// Host-only library queries whose answers `nimble run` keeps: PyTorch asks cuBLASLt for its
// heuristics before every cublasLtMatmul (about 40 us each on the H100 machine, 49 times per
// ViT-B/16 inference), with the same descriptors every iteration. The answer depends only on the
// handle, the descriptors' contents (followed from the program's calls, library_keys.hpp) and the
// count asked for; it is kept once two calls with the same inputs gave the same answer, and
// handed back from then on. Only while replaying (not in a --compare plain block): otherwise calls pass through.
#pragma once

#include <cstddef>

#include "library_keys.hpp"

namespace nimble::hooks {

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
