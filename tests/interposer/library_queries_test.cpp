// The cuBLASLt heuristics kept by nimble run: asked twice, answered from memory from then on, and
// always asked when two answers for the same inputs differ.
#include "library_queries.hpp"
#include "memo_pace.hpp"

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

// Descriptors as the program makes them: created through cuBLASLt (followed by nimble), with
// bytes of their structs left as they were.
struct Inputs {
  cublasLtMatmulDescOpaque_t desc{};
  cublasLtMatrixLayoutOpaque_t layouts[4]{};
  cublasLtMatmulPreferenceOpaque_t preference{};
  cublasLtMatmulHeuristicResult_t results[4]{};
  int returned = 0;

  Inputs() {
    cublasLtMatmulDesc_t d = &desc;
    after_cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    for (auto& layout : layouts) {
      cublasLtMatrixLayout_t l = &layout;
      after_cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 64, 64, 64);
    }
    cublasLtMatmulPreference_t p = &preference;
    after_cublasLtMatmulPreferenceCreate(&p);
  }
  ~Inputs() {
    after_cublasLtMatmulDescDestroy(&desc);
    for (auto& layout : layouts) after_cublasLtMatrixLayoutDestroy(&layout);
    after_cublasLtMatmulPreferenceDestroy(&preference);
  }

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

  in.desc.data[7] = 99;  // bytes cuBLASLt left as they were: not part of the inputs
  in.ask();
  EXPECT_EQ(g_asked, 2);

  const std::int64_t ld = 128;  // another shape: asked again
  after_cublasLtMatrixLayoutSetAttribute(&in.layouts[2], CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld);
  in.ask();
  EXPECT_EQ(g_asked, 3);
}

TEST(RememberedHeuristics, DescriptorsNimbleDidNotSeeCreatedAreAlwaysAsked) {
  g_asked = 0;
  Inputs in;
  after_cublasLtMatmulPreferenceDestroy(&in.preference);
  for (int i = 0; i < 3; ++i) in.ask();
  EXPECT_EQ(g_asked, 3);
}

TEST(RememberedHeuristics, ChangingAnswersAreAlwaysAsked) {
  g_asked = 0;
  g_unstable = true;
  const QueryStats before = query_stats();
  Inputs in;
  const std::int32_t transpose = 1;  // inputs no other test uses
  after_cublasLtMatmulDescSetAttribute(&in.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose);
  for (int i = 1; i <= 4; ++i) {
    in.ask();
    EXPECT_EQ(in.results[0].algo.data[0], static_cast<std::uint64_t>(i)) << "the library's own answer";
  }
  EXPECT_EQ(g_asked, 4);
  EXPECT_EQ(query_stats().unstable - before.unstable, 1u);
  EXPECT_EQ(query_stats().answered, before.answered);
  g_unstable = false;
}

// Shapes that follow the data (a mixture of experts' routing): inputs rarely come again, and a
// window of queries that the memory answered fewer than half of makes it rest, the queries going
// straight to the library, even for inputs it holds; it is asked again after the rest.
TEST(RememberedHeuristics, AMemoryRarelyAskedForTheSameInputsRests) {
  g_asked = 0;
  g_unstable = false;
  Inputs kept;
  kept.desc.data[0] = 0x77;
  const std::int32_t epilogue = 2;  // inputs no other test uses
  after_cublasLtMatmulDescSetAttribute(&kept.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  kept.ask();
  kept.ask();
  const QueryStats before = query_stats();
  kept.ask();
  ASSERT_EQ(query_stats().answered - before.answered, 1u) << "kept: answered from memory";
  Inputs changing;
  for (std::int64_t rows = 1; rows <= static_cast<std::int64_t>(MemoPace::kWindow); ++rows) {
    after_cublasLtMatrixLayoutSetAttribute(&changing.layouts[0], CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows);
    changing.ask();  // a new shape each time
  }
  const QueryStats rested = query_stats();
  EXPECT_EQ(rested.rests - before.rests, 1u);
  const int asked = g_asked;
  kept.ask();
  EXPECT_EQ(g_asked, asked + 1) << "the memory rests: the library answers";
  EXPECT_EQ(query_stats().answered, rested.answered);
  EXPECT_EQ(query_stats().rested - rested.rested, 1u);
  for (std::size_t i = 1; i < MemoPace::kFirstRest; ++i) kept.ask();  // the rest's other calls
  const QueryStats after = query_stats();
  kept.ask();
  EXPECT_EQ(query_stats().answered - after.answered, 1u) << "after the rest, answered from memory again";
}

// Answered from memory whenever nimble run runs (between replayed iterations, in a trial's plain
// blocks, while recordings rest) and while the process guard pauses it; NIMBLE_RUN_SKIP_LIBRARY=0,
// and nimble run idle, stepped aside or recording (running() false), ask the library.
TEST(RememberedHeuristics, WheneverNimbleRunRuns) {
  EXPECT_TRUE(remembers_queries_now(true, false, true));
  EXPECT_TRUE(remembers_queries_now(false, true, true));    // paused by the process guard
  EXPECT_FALSE(remembers_queries_now(true, false, false));  // NIMBLE_RUN_SKIP_LIBRARY=0
  EXPECT_FALSE(remembers_queries_now(false, true, false));
  EXPECT_FALSE(remembers_queries_now(false, false, true));  // not running: idle, or stepped aside
}

// cublasLtMatmul and cudnnBackendExecute: keyed, skipped or observed only inside a replayed
// iteration; between iterations and while every recording rests they cost what they cost idle.
TEST(ReplayableLibraryCalls, KeyedOnlyInsideAReplayedIteration) {
  EXPECT_TRUE(library_call_may_be_taken(true, true, false));
  EXPECT_FALSE(library_call_may_be_taken(true, false, false));  // between iterations, or resting
  EXPECT_FALSE(library_call_may_be_taken(true, true, true));    // a plain block
  EXPECT_FALSE(library_call_may_be_taken(false, true, false));  // not nimble run
}

}  // namespace
}  // namespace nimble::hooks
