// The automatic capture range on synthetic task sequences.
#include <gtest/gtest.h>

#include <vector>

#include "period_detector.hpp"

namespace nimble::hooks {
namespace {

using Action = AutoRange::Action;
constexpr std::uint64_t kSync = 1000;  // signature of a host sync in these sequences
constexpr std::uint64_t kCopy = 2000;  // a copy: neither a sync nor a kernel

// The unit tests below use short synthetic periods: no minimum span unless a test says so.
AutoRange::Options short_periods() {
  AutoRange::Options options;
  options.min_span = 0;
  return options;
}

std::vector<std::uint64_t> repeat(const std::vector<std::uint64_t>& body, int times) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), body.begin(), body.end());
  return out;
}

struct Window {
  std::size_t begin = 0, end = 0;  // task indices, end exclusive
  bool found = false;
};

Window run(AutoRange& range, const std::vector<std::uint64_t>& seq) {
  Window w;
  bool open = false;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const Action a = range.on_task(seq[i], seq[i] == kSync, seq[i] != kSync && seq[i] != kCopy);
    if (a == Action::BeginBefore || a == Action::BeginBeforeEndAfter) {
      w.begin = i;
      open = true;
    }
    if (open && (a == Action::EndAfter || a == Action::BeginBeforeEndAfter)) {
      w.end = i + 1;
      w.found = true;
      open = false;
    }
  }
  return w;
}

TEST(SmallestRepeatingPeriod, FindsTheSmallestPeriodRepeatedEnoughTimes) {
  EXPECT_EQ(smallest_repeating_period(repeat({1, 2, 3}, 3), 3, 100), 3u);
  EXPECT_EQ(smallest_repeating_period(repeat({1, 2, 3}, 2), 3, 100), 0u);  // only two copies
  EXPECT_EQ(smallest_repeating_period(repeat({1, 2, 3}, 2), 2, 100), 3u);
  EXPECT_EQ(smallest_repeating_period(repeat({7}, 5), 3, 100), 1u);
  EXPECT_EQ(smallest_repeating_period(repeat({1, 2, 1, 3}, 3), 3, 100), 4u);  // not 2
  EXPECT_EQ(smallest_repeating_period(repeat({1, 2, 3, 4}, 3), 3, 3), 0u);   // above max_period
  EXPECT_EQ(smallest_repeating_period({}, 3, 100), 0u);
}

TEST(AutoRange, RecordsOneIterationStartingAfterTheSync) {
  // Warm-up differs (cudnn benchmarking), then a steady iteration ending with loss.item().
  std::vector<std::uint64_t> seq = {50, 51, 52, kSync, 53, kSync};
  const std::vector<std::uint64_t> iteration = {1, 2, 3, 4, 5, kSync};
  auto steady = repeat(iteration, 6);
  seq.insert(seq.end(), steady.begin(), steady.end());

  AutoRange range(short_periods());
  const Window w = run(range, seq);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), iteration.size());
  EXPECT_TRUE(range.anchored_at_sync());
  EXPECT_FALSE(range.diverged());
  EXPECT_EQ(w.end - w.begin, iteration.size());
  EXPECT_EQ(seq[w.begin], 1u);       // starts right after a sync
  EXPECT_EQ(seq[w.end - 1], kSync);  // ends with the iteration's sync
  // Detected after three steady copies: the fourth is recorded.
  EXPECT_EQ(w.begin, 6 + 3 * iteration.size());
}

TEST(AutoRange, RepeatedLayersInsideAnIterationAreNotTakenForIt) {
  // A network of four identical blocks plus a head, then the optimizer's sync.
  std::vector<std::uint64_t> iteration;
  for (int block = 0; block < 4; ++block) iteration.insert(iteration.end(), {10, 11, 12});
  iteration.insert(iteration.end(), {20, 21, kSync});
  AutoRange range(short_periods());
  const Window w = run(range, repeat(iteration, 6));
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), iteration.size());
}

TEST(AutoRange, IterationOptionSkipsPeriods) {
  const std::vector<std::uint64_t> iteration = {1, 2, kSync};
  AutoRange::Options options = short_periods();
  options.iteration = 3;
  AutoRange range(options);
  const Window w = run(range, repeat(iteration, 10));
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.begin, 3 * iteration.size() + 2 * iteration.size());
}

TEST(AutoRange, AChangeWhileWaitingRestartsDetection) {
  AutoRange::Options options = short_periods();
  options.iteration = 2;
  AutoRange range(options);
  auto seq = repeat({1, 2, kSync}, 3);   // detected here, waiting one period
  seq.insert(seq.end(), {1, 9, kSync});  // ... which does not match
  auto rest = repeat({4, 5, 6, kSync}, 6);
  seq.insert(seq.end(), rest.begin(), rest.end());
  const Window w = run(range, seq);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), 4u);
  EXPECT_EQ(range.detections(), 2u);
}

TEST(AutoRange, WithoutSyncsItLooksPeriodically) {
  AutoRange::Options options = short_periods();
  options.check_every = 16;
  AutoRange range(options);
  std::vector<std::uint64_t> iteration;
  for (std::uint64_t i = 0; i < 37; ++i) iteration.push_back(100 + i);
  const Window w = run(range, repeat(iteration, 8));
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), 37u);
  EXPECT_FALSE(range.anchored_at_sync());
  EXPECT_EQ(w.end - w.begin, 37u);
}

TEST(AutoRange, NothingRepeatsNothingIsRecorded) {
  AutoRange range(short_periods());
  std::vector<std::uint64_t> seq;
  for (std::uint64_t i = 0; i < 2000; ++i) seq.push_back(i % 7 == 0 ? kSync : i);
  EXPECT_FALSE(run(range, seq).found);
  EXPECT_EQ(range.phase(), AutoRange::Phase::Detecting);
}

// Seen on the GPU: model.cuda() uploads parameters of equal size one by one, each a copy and a
// sync; three in a row looked like a two-task iteration. Periods need kernels and a minimum span.
TEST(AutoRange, StartUpCopiesAreNotAnIteration) {
  auto seq = repeat({kCopy, kSync}, 10);
  std::vector<std::uint64_t> iteration;
  for (std::uint64_t k = 0; k < 40; ++k) iteration.push_back(k);
  iteration.push_back(kSync);
  const auto steady = repeat(iteration, 6);
  seq.insert(seq.end(), steady.begin(), steady.end());
  AutoRange range({});
  const Window w = run(range, seq);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), 41u);
  EXPECT_EQ(w.begin, 20 + 3 * 41u);
}

TEST(AutoRange, ShortPeriodsMustCoverTheMinimumSpan) {
  AutoRange::Options options;
  options.min_span = 32;
  AutoRange range(options);
  const Window w = run(range, repeat({1, 2, 3, kSync}, 10));  // 4 tasks: 8 copies needed
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.begin, 8 * 4u);
  EXPECT_EQ(smallest_repeating_period(repeat({1, 2, 3, 4}, 7), 3, 100, 32), 0u);
  EXPECT_EQ(smallest_repeating_period(repeat({1, 2, 3, 4}, 8), 3, 100, 32), 4u);
}

TEST(AutoRange, ADivergingRecordedPeriodIsFlagged) {
  auto seq = repeat({1, 2, 3, kSync}, 3);
  seq.insert(seq.end(), {1, 7, 3, kSync});
  AutoRange range(short_periods());
  const Window w = run(range, seq);
  ASSERT_TRUE(w.found);
  EXPECT_TRUE(range.diverged());
}

}  // namespace
}  // namespace nimble::hooks
