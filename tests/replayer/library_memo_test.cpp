// LibraryMemo: which recorded library calls may be skipped, and when a call's inputs are trusted.
#include "nimble/replayer/library_memo.hpp"

#include <gtest/gtest.h>

#include "call_trace.hpp"

namespace nimble::replayer {
namespace {

// The call-trace iteration with ops 0 and 1 issued by one cudnnBackendExecute (key 0xabc), the
// memset by a cublasLtMatmul with no key.
ReplayPlan library_plan(CopyDirection copy = CopyDirection::DtoD) {
  auto r = test::plan_of(test::parse(trace_text()));
  EXPECT_TRUE(r.plan) << test::joined(r);
  ReplayPlan plan = std::move(*r.plan);
  plan.ops[1].copy.direction = copy;
  for (std::size_t i : {0, 1}) {
    plan.ops[i].library_call = 5;
    plan.ops[i].library_symbol = "cudnnBackendExecute";
    plan.ops[i].library_key = 0xabc;
  }
  plan.ops[2].library_call = 6;
  plan.ops[2].library_symbol = "cublasLtMatmul";
  return plan;
}

// The mechanism for both functions (the ones NIMBLE_RUN_SKIP_CALLS names by default).
LibraryMemoOptions both(std::size_t trust = 2, std::size_t recheck = 64, std::size_t max_keys = 8) {
  LibraryMemoOptions options{trust, recheck, max_keys};
  EXPECT_EQ(options.symbols, (std::set<std::string>{"cudnnBackendExecute", "cublasLtMatmul"}));
  return options;
}

OpPatches patch_of(std::uint8_t seed) { return {{{8, {seed}}}, {}}; }

// A key seen to launch `patches` twice since the recording: the next call is skipped with them.
void expect_learned(LibraryMemo& memo, std::uint64_t key, const OpPatches& patches) {
  memo.observed(0, key, patches, 1);
  EXPECT_FALSE(memo.decide(0, key).skip) << "seen once";
  memo.observed(0, key, patches, 1);
  const LibraryDecision d = memo.decide(0, key);
  ASSERT_TRUE(d.skip);
  EXPECT_EQ(*d.patches, patches);
}

TEST(LibrarySites, OneSitePerCallWithWhyItCannotBeSkipped) {
  const ReplayPlan plan = library_plan();
  const auto sites = library_sites(plan);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].symbol, "cudnnBackendExecute");
  EXPECT_EQ(sites[0].first_op, 0u);
  EXPECT_EQ(sites[0].ops, 2u);
  EXPECT_EQ(sites[0].recorded_key, 0xabcu);
  EXPECT_EQ(sites[0].not_skippable, "");
  EXPECT_NE(sites[1].not_skippable.find("no key"), std::string::npos);

  const auto host = library_sites(library_plan(CopyDirection::HtoD));
  EXPECT_NE(host[0].not_skippable.find("copies to or from the host"), std::string::npos) << host[0].not_skippable;

  // Work on another stream ordered after its ops: the events that order it are the call's own
  // (cuDNN forks some convolutions onto its stream), and a skipped call records none.
  ReplayPlan forked = library_plan();
  for (Op& op : forked.ops) op.program_stream = 0x1;
  forked.ops[1].deps = {0};
  forked.ops[2].deps = {1};
  EXPECT_EQ(library_sites(forked)[0].not_skippable, "") << "one stream";
  forked.ops[2].program_stream = 0x7f00aa00;
  const auto forked_sites = library_sites(forked);
  EXPECT_NE(forked_sites[0].not_skippable.find("ordered against another stream's work by events"), std::string::npos)
      << forked_sites[0].not_skippable;
  forked.ops[1].program_stream = 0x7f00aa00;  // now its own op waits for the first one's stream
  EXPECT_NE(library_sites(forked)[0].not_skippable.find("another stream"), std::string::npos);
  forked.ops[0].program_stream = forked.ops[1].program_stream = forked.ops[2].program_stream = 0;
  EXPECT_EQ(library_sites(forked)[0].not_skippable, "") << "streams the trace does not name";

  // Page-locked host memory its kernels read (cuDNN's batch-norm counters): its host code may
  // write it before the launch, which no key covers.
  ReplayPlan counters = library_plan();
  counters.ops[1].touches_host_memory = true;
  const auto counter_sites = library_sites(counters);
  EXPECT_NE(counter_sites[0].not_skippable.find("page-locked host memory"), std::string::npos)
      << counter_sites[0].not_skippable;

  // The recording ends with a call's ops: it may have cut the call short.
  ReplayPlan cut = library_plan();
  cut.ops.push_back(cut.ops[0]);
  cut.ops.back().library_call = 7;
  const auto cut_sites = library_sites(cut);
  EXPECT_EQ(cut_sites[0].not_skippable, "");
  EXPECT_NE(cut_sites.back().not_skippable.find("ends with it"), std::string::npos) << cut_sites.back().not_skippable;
  cut.ops.push_back(Op{});  // a sync after it changes nothing
  EXPECT_NE(library_sites(cut).back().not_skippable.find("ends with it"), std::string::npos);

  ReplayPlan split = library_plan();
  split.ops[4].library_call = 5;  // the DtoH copy too, after other work
  EXPECT_NE(library_sites(split)[0].not_skippable.find("not contiguous"), std::string::npos);
}

TEST(LibraryMemo, TheRecordedInputsAreSkippedOnceSeenAgainWithTheSameLaunches) {
  const ReplayPlan plan = library_plan();
  LibraryMemo memo(plan, both());
  ASSERT_EQ(memo.site_at(0, "cudnnBackendExecute"), 0u);
  EXPECT_FALSE(memo.site_at(0, "cublasLtMatmul"));
  EXPECT_FALSE(memo.site_at(1, "cudnnBackendExecute"));
  EXPECT_FALSE(memo.decide(0, 0xabc).skip) << "seen once (the recording): run it and compare";
  memo.observed(0, 0xabc, OpPatches(2), 1000);
  const LibraryDecision d = memo.decide(0, 0xabc);
  EXPECT_TRUE(d.skip);
  ASSERT_NE(d.patches, nullptr);
  EXPECT_EQ(*d.patches, OpPatches(2));
  EXPECT_EQ(memo.stats().at("cudnnBackendExecute").calls, 2u);
  EXPECT_EQ(memo.stats().at("cudnnBackendExecute").skipped, 1u);
  EXPECT_EQ(memo.stats().at("cudnnBackendExecute").run_ns, 1000u);
}

TEST(LibraryMemo, ACallThatMayNotBeSkippedRunsAndStillCounts) {
  LibraryMemo memo(library_plan(), both());
  expect_learned(memo, 0x123, patch_of(1));
  const LibraryDecision d = memo.decide(0, 0x123, /*may_skip=*/false);  // the range is looking
  EXPECT_FALSE(d.skip);
  EXPECT_TRUE(memo.decide(0, 0x123).skip);  // trust is kept
  EXPECT_EQ(memo.stats().at("cudnnBackendExecute").calls, 4u);
  EXPECT_EQ(memo.stats().at("cudnnBackendExecute").skipped, 2u);
}

TEST(LibraryMemo, OtherInputsAreLearnedWithTheirPatches) {
  const ReplayPlan plan = library_plan();
  LibraryMemo memo(plan, both());
  EXPECT_FALSE(memo.decide(0, 0x2).skip);
  expect_learned(memo, 0x2, patch_of(7));
}

TEST(LibraryMemo, EveryRecheckthUseRunsTheRealCall) {
  const ReplayPlan plan = library_plan();
  LibraryMemo memo(plan, both(2, 3, 8));
  memo.observed(0, 0xabc, OpPatches(2), 1);
  EXPECT_TRUE(memo.decide(0, 0xabc).skip);
  EXPECT_TRUE(memo.decide(0, 0xabc).skip);
  EXPECT_FALSE(memo.decide(0, 0xabc).skip);
  EXPECT_TRUE(memo.decide(0, 0xabc).skip);
}

TEST(LibraryMemo, ALaterCallThatDiffersFromTheRecordingReplacesItThenMustBeConfirmed) {
  const ReplayPlan plan = library_plan();
  LibraryMemo memo(plan, both());
  expect_learned(memo, 0xabc, patch_of(1));  // other stack bytes than the recording's path left
  EXPECT_TRUE(memo.disabled().empty());
}

// cuDNN's patches are often its whole argument struct (hundreds of bytes): the evidence names the
// first byte that differs and at most a word from there, not the struct.
TEST(LibraryMemo, TheEvidenceShowsTheFirstDifferingBytesNotTheWholePatch) {
  const ReplayPlan plan = library_plan();
  const std::vector<std::uint8_t> recorded = recorded_parameters(plan.ops[0]);
  ASSERT_GE(recorded.size(), 16u);
  std::vector<std::uint8_t> one = recorded, other = recorded;
  one[3] ^= 0x10;                          // a byte the first call changed as well: not the difference
  other[3] ^= 0x10;
  other[9] ^= 0xff, other[11] ^= 0x0f;     // the difference: bytes 9 to 11
  LibraryMemo memo(plan, both());
  memo.observed(0, 0xabc, OpPatches{{{0, one}}, {}}, 1);  // replaces the recording's sighting
  memo.observed(0, 0xabc, OpPatches{{{0, other}}, {}}, 1);
  ASSERT_EQ(memo.disabled().size(), 1u);
  const auto hex3 = [](const std::vector<std::uint8_t>& b) { return trace::to_hex(b.data() + 9, 3); };
  EXPECT_EQ(memo.disabled()[0].detail, "op 0, bytes at 9: " + hex3(one) + " then " + hex3(other));
}

TEST(LibraryMemo, SameInputsWithOtherLaunchesDisableTheSiteForGood) {
  const ReplayPlan plan = library_plan();
  LibraryMemo memo(plan, both());
  memo.observed(0, 0xabc, patch_of(1), 1);  // replaces the recording's sighting
  memo.observed(0, 0xabc, patch_of(2), 1);  // the same inputs, other bytes again: a hidden input
  ASSERT_EQ(memo.disabled().size(), 1u);
  const std::string text = memo.disabled()[0].text();
  EXPECT_NE(text.find("the same inputs launched other argument bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("task 0"), std::string::npos) << text;
  EXPECT_NE(text.find("op 0, bytes at 8: 01 then 02"), std::string::npos) << text;
  EXPECT_EQ(memo.disabled()[0].detail, "op 0, bytes at 8: 01 then 02");
  memo.observed(0, 0xabc, OpPatches(2), 1);
  memo.observed(0, 0xabc, OpPatches(2), 1);
  EXPECT_FALSE(memo.decide(0, 0xabc).skip);

  LibraryMemo other(plan, both());
  other.observed(0, 0xabc, std::nullopt, 1);  // known inputs, and the ops did not match
  EXPECT_EQ(other.disabled().size(), 1u);
  LibraryMemo unknown(plan, both());
  unknown.observed(0, 0x77, std::nullopt, 1);  // new inputs that launched other work: nothing learned
  EXPECT_TRUE(unknown.disabled().empty());
  EXPECT_FALSE(unknown.decide(0, 0x77).skip);
}

TEST(LibraryMemo, ASiteKeepsAtMostMaxKeys) {
  const ReplayPlan plan = library_plan();
  LibraryMemo memo(plan, both(1, 64, 2));  // trust after one sighting; the recorded key and one more
  memo.observed(0, 0x2, patch_of(2), 1);
  memo.observed(0, 0x3, patch_of(3), 1);
  EXPECT_TRUE(memo.decide(0, 0x2).skip);
  EXPECT_FALSE(memo.decide(0, 0x3).skip);
}

TEST(LibraryMemo, CallsWithoutAKeyOrWithHostCopiesAreNeverSkipped) {
  const ReplayPlan plan = library_plan(CopyDirection::HtoD);
  LibraryMemo memo(plan, both(1, 64, 8));
  memo.observed(0, 0xabc, OpPatches(2), 1);
  EXPECT_FALSE(memo.decide(0, 0xabc).skip);
  EXPECT_FALSE(memo.decide(1, 0x1).skip);
}

// Sites of the functions NIMBLE_RUN_SKIP_CALLS names that the recording rules out are listed with
// the op that rules them out (the exit summary's "never skipped" lines); ones it does not name are
// the user's choice, not listed.
TEST(LibraryMemo, SitesTheRecordingRulesOutAreListedWithTheOpThatDoesIt) {
  ReplayPlan plan = library_plan();
  for (Op& op : plan.ops) op.program_stream = 0x1;
  plan.ops[2].deps = {1};
  plan.ops[2].program_stream = 0x7f00aa00;  // the first call's second op is ordered before another stream's work
  plan.ops[2].library_key = 0x1;
  const LibraryMemo memo(plan, both());
  ASSERT_EQ(memo.unskippable().size(), 2u);
  EXPECT_EQ(memo.unskippable()[0].symbol, "cudnnBackendExecute");
  EXPECT_EQ(memo.unskippable()[0].at, describe_op(plan.ops[0]));
  EXPECT_NE(memo.unskippable()[0].reason.find("ordered against another stream's work by events"), std::string::npos);
  EXPECT_EQ(memo.unskippable()[0].detail, describe_op(plan.ops[1]));
  EXPECT_EQ(memo.unskippable()[1].symbol, "cublasLtMatmul");
  EXPECT_TRUE(memo.disabled().empty());

  LibraryMemoOptions lt_only;
  lt_only.symbols = {"cublasLtMatmul"};
  const LibraryMemo named(plan, lt_only);
  ASSERT_EQ(named.unskippable().size(), 1u);
  EXPECT_EQ(named.unskippable()[0].symbol, "cublasLtMatmul");
}

// NIMBLE_RUN_SKIP_CALLS: a call of a function it does not name always runs (its launches are still
// matched and compared like any call's).
TEST(LibraryMemo, OnlyTheFunctionsTheOptionsNameAreSkipped) {
  const ReplayPlan plan = library_plan();
  LibraryMemoOptions options;
  options.symbols = function_names(" cublasLtMatmul ,, ");
  EXPECT_EQ(options.symbols, (std::set<std::string>{"cublasLtMatmul"}));
  LibraryMemo memo(plan, options);
  EXPECT_NE(memo.sites()[0].not_skippable.find("NIMBLE_RUN_SKIP_CALLS does not name cudnnBackendExecute"),
            std::string::npos)
      << memo.sites()[0].not_skippable;
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(memo.decide(0, 0xabc).skip) << "call " << i;
    memo.observed(0, 0xabc, OpPatches(2), 1);
  }
  EXPECT_TRUE(function_names("").empty());
  EXPECT_TRUE(function_names("none").empty());
  EXPECT_EQ(function_names("cudnnBackendExecute,cublasLtMatmul").size(), 2u);
}

// NIMBLE_RUN_LIBRARY_RECHECK=1: every use of a trusted key runs and is compared, so nothing is
// skipped and a key that misses an input is found at its first different launch.
TEST(LibraryMemo, ARecheckOfOneRunsEveryCallAndFindsTheFirstDifferentLaunch) {
  const ReplayPlan plan = library_plan();
  LibraryMemoOptions options = both();
  options.recheck = 1;
  LibraryMemo memo(plan, options);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(memo.decide(0, 0xabc).skip) << "call " << i;
    memo.observed(0, 0xabc, patch_of(1), 1);
  }
  EXPECT_TRUE(memo.disabled().empty());
  memo.observed(0, 0xabc, patch_of(2), 1);
  ASSERT_EQ(memo.disabled().size(), 1u);
  EXPECT_NE(memo.disabled()[0].reason.find("misses an input"), std::string::npos) << memo.disabled()[0].text();
}

}  // namespace
}  // namespace nimble::replayer
