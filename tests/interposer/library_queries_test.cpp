// The cuBLASLt heuristics kept by nimble run: asked twice, answered from memory from then on, and
// always asked when two answers for the same inputs differ.
#include "library_queries.hpp"

#include <gtest/gtest.h>

namespace nimble::hooks {
namespace {

int g_asked = 0;
bool g_unstable = false;

// Stands in for the library: one result whose algo carries a byte of the descriptor (or, when
// unstable, the number of calls so far).
cublasStatus_t fake_heuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  ++g_asked;
  results[0] = {};
  results[0].algo.data[0] = g_unstable ? static_cast<std::uint64_t>(g_asked) : desc->data[0];
  results[0].workspaceSize = 4096;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

struct Inputs {
  cublasLtMatmulDescOpaque_t desc{};
  cublasLtMatrixLayoutOpaque_t layouts[4]{};
  cublasLtMatmulPreferenceOpaque_t preference{};
  cublasLtMatmulHeuristicResult_t results[4]{};
  int returned = 0;

  cublasStatus_t ask() {
    return remembered_cublasLtMatmulAlgoGetHeuristic(&fake_heuristic, nullptr, &desc, &layouts[0], &layouts[1], &layouts[2],
                                                     &layouts[3], &preference, 4, results, &returned);
  }
};

TEST(RememberedHeuristics, AskedTwiceThenAnsweredFromMemory) {
  g_asked = 0;
  g_unstable = false;
  const QueryStats before = query_stats();
  Inputs in;
  in.desc.data[0] = 0x1234;
  for (int i = 0; i < 5; ++i) {
    in.results[0] = {};
    ASSERT_EQ(in.ask(), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(in.returned, 1);
    EXPECT_EQ(in.results[0].algo.data[0], 0x1234u);
    EXPECT_EQ(in.results[0].workspaceSize, 4096u);
  }
  EXPECT_EQ(g_asked, 2);
  EXPECT_EQ(query_stats().answered - before.answered, 3u);

  in.layouts[2].data[5] = 1;  // another shape: asked again
  in.ask();
  EXPECT_EQ(g_asked, 3);
}

TEST(RememberedHeuristics, ChangingAnswersAreAlwaysAsked) {
  g_asked = 0;
  g_unstable = true;
  const QueryStats before = query_stats();
  Inputs in;
  in.desc.data[0] = 0x777;
  for (int i = 1; i <= 4; ++i) {
    in.ask();
    EXPECT_EQ(in.results[0].algo.data[0], static_cast<std::uint64_t>(i)) << "the library's own answer";
  }
  EXPECT_EQ(g_asked, 4);
  EXPECT_EQ(query_stats().unstable - before.unstable, 1u);
  EXPECT_EQ(query_stats().answered, before.answered);
  g_unstable = false;
}

}  // namespace
}  // namespace nimble::hooks
