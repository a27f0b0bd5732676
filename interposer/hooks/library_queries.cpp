#include "library_queries.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "memo_pace.hpp"
#include "signature.hpp"

namespace nimble::hooks {
namespace {

struct Answer {
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  std::vector<cublasLtMatmulHeuristicResult_t> results;
  bool stable = false;     // a second call gave the same answer
  bool unstable = false;   // a second call gave another: always ask
};

bool same(const Answer& a, cublasStatus_t status, const cublasLtMatmulHeuristicResult_t* results, int count) {
  return a.status == status && a.results.size() == static_cast<std::size_t>(count) &&
         std::memcmp(a.results.data(), results, a.results.size() * sizeof *results) == 0;
}

// Never destroyed: calls may arrive during exit.
struct Kept {
  std::mutex mu;
  std::unordered_map<std::uint64_t, Answer> answers;
  QueryStats stats;
  MemoPace pace;
};
Kept& kept() {
  static auto* k = new Kept();
  return *k;
}
constexpr std::size_t kMaxAnswers = 4096;

}  // namespace

cublasStatus_t remembered_cublasLtMatmulAlgoGetHeuristic(AlgoGetHeuristicFn real, cublasLtHandle_t handle,
                                                         cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                                                         cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                                         cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t preference,
                                                         int requested, cublasLtMatmulHeuristicResult_t results[],
                                                         int* returned) {
  if (!desc || !a || !b || !c || !d || !preference || !results || !returned || requested <= 0) {
    return real(handle, desc, a, b, c, d, preference, requested, results, returned);
  }
  Kept& k = kept();
  {
    std::lock_guard<std::mutex> lock(k.mu);
    if (!k.pace.consult()) return real(handle, desc, a, b, c, d, preference, requested, results, returned);
  }
  // The descriptors' contents as the program made them (their structs hold uninitialised bytes).
  std::uint64_t key = signature_of("cublasLtMatmulAlgoGetHeuristic", reinterpret_cast<std::uintptr_t>(handle), requested);
  for (const void* descriptor : {static_cast<const void*>(desc), static_cast<const void*>(a), static_cast<const void*>(b),
                                 static_cast<const void*>(c), static_cast<const void*>(d),
                                 static_cast<const void*>(preference)}) {
    const std::optional<std::uint64_t> part = descriptor_key(descriptor);
    if (!part) return real(handle, desc, a, b, c, d, preference, requested, results, returned);
    key = mix(key, *part);
  }
  {
    std::lock_guard<std::mutex> lock(k.mu);
    auto it = k.answers.find(key);
    if (it != k.answers.end() && it->second.stable) {
      const Answer& answer = it->second;
      std::memcpy(results, answer.results.data(), answer.results.size() * sizeof *results);
      *returned = static_cast<int>(answer.results.size());
      ++k.stats.answered;
      k.pace.looked(true);
      return answer.status;
    }
  }
  const cublasStatus_t status = real(handle, desc, a, b, c, d, preference, requested, results, returned);
  const int count = status == CUBLAS_STATUS_SUCCESS ? std::max(0, std::min(*returned, requested)) : 0;
  std::lock_guard<std::mutex> lock(k.mu);
  ++k.stats.asked;
  k.pace.looked(false);
  auto it = k.answers.find(key);
  if (it == k.answers.end()) {
    if (k.answers.size() < kMaxAnswers) {
      k.answers[key] = {status, std::vector<cublasLtMatmulHeuristicResult_t>(results, results + count), false, false};
    }
  } else if (!it->second.unstable) {
    if (same(it->second, status, results, count)) {
      it->second.stable = true;
    } else {
      it->second.unstable = true;
      ++k.stats.unstable;
    }
  }
  return status;
}

QueryStats query_stats() {
  Kept& k = kept();
  std::lock_guard<std::mutex> lock(k.mu);
  QueryStats stats = k.stats;
  stats.rested = k.pace.rested();
  stats.rests = k.pace.rests();
  return stats;
}

}  // namespace nimble::hooks
