// Host-only library queries whose answers `nimble run` keeps: PyTorch asks cuBLASLt for its
// heuristics before every cublasLtMatmul (about 40 us each on the H100 machine, 49 times per
// ViT-B/16 inference; on the H200 cuBLASLt's own cache answers the inference service's 38 a step in
// a median 1.2 us, its first ones in milliseconds), with
// the same descriptors every iteration. The answer depends only on the handle, the descriptors'
// contents (followed from the program's calls, library_keys.hpp) and the count asked for; it is
// kept once two calls with the same inputs gave the same answer, and handed back from then on,
// whenever nimble run runs (remembers_queries_now), unless the memo rests because its answers
// were too rarely asked for again (memo_pace.hpp).
#pragma once

#include <cstddef>

#include "library_keys.hpp"

namespace nimble::hooks {

// Whether a query is answered from memory now: whenever nimble run runs, replaying or not (a trial's
// plain blocks too, so that the trial times what replay adds), and while the process guard has it
// paused (else paused spans pay every query and running reads faster than it is: the guard kept
// the inference service's replay at 1.03-1.06 while the process read 0.93), unless
// NIMBLE_RUN_SKIP_LIBRARY=0.
// An answer from memory is the library's own, given twice, and costs a lookup instead of the query.
// (From 2026-11-28 to 11-30 only inside replayed iterations, on the suspicion that answering cost HF
// generate its 2-4%; answering only there did not close that gap. Answered everywhere again, the
// inference service answered 6459 of its 6687 from memory and read as before, 0.90-0.95 of plain,
// results identical: docs/benchmarks/guard-h200-nov30.)
constexpr bool remembers_queries_now(bool running, bool guard_paused, bool skip_library) {
  return (running || guard_paused) && skip_library;
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
  std::size_t rested = 0;       // calls that went to the library while the memo rested (memo_pace.hpp)
  std::size_t rests = 0;        // times it rested: windows in which it answered fewer than half
};
QueryStats query_stats();

}  // namespace nimble::hooks
