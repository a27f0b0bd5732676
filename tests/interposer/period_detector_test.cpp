// The automatic capture range on synthetic task sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "period_detector.hpp"

namespace nimble::hooks {
namespace {

using Action = AutoRange::Action;
constexpr std::uint64_t kSync = 1000;  // signature of a host sync in these sequences
constexpr std::uint64_t kCopy = 2000;  // a copy: neither a sync nor a kernel

// The randomised tests' seeded generator (an LCG step; its high bits).
struct Lcg {
  std::uint64_t state;
  std::uint64_t operator()() { return (state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; }
};

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

// The defaults without the look while a program is quiet: periods are found at syncs only.
AutoRange::Options only_at_syncs() {
  AutoRange::Options options;
  options.quiet_after = 0;
  return options;
}

// Runs `seq` through `range` and expects one period of `period` tasks found, matched and recorded
// whole; returns its window.
Window expect_recorded(AutoRange& range, const std::vector<std::uint64_t>& seq, std::size_t period) {
  const Window w = run(range, seq);
  EXPECT_TRUE(w.found);
  EXPECT_EQ(range.period(), period);
  EXPECT_FALSE(range.diverged());
  EXPECT_EQ(w.end - w.begin, period);
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

// A training step with two host syncs (the GradScaler's inf check mid-step, the loss read at its
// end), found at the mid-step one. Alone it is recorded from there; with a live recording that
// begins at the step's first call (another input size of the same loop, nimble run), from that call,
// so that both recordings begin where the program changes shape. A start that recurs inside the
// period says nothing and is not followed.
TEST(AutoRange, ANewPeriodIsRecordedFromWhereALiveRecordingBegins) {
  const std::vector<std::uint64_t> step = {10, 11, 12, kSync, 13, 14, kSync};
  std::vector<std::uint64_t> seq = {13, 14, kSync};  // found mid-step: the third copy ends at the inf check
  const auto steady = repeat(step, 5);
  seq.insert(seq.end(), steady.begin(), steady.end());

  AutoRange alone(short_periods());
  const Window from_sync = expect_recorded(alone, seq, step.size());
  EXPECT_EQ(seq[from_sync.begin], 13u);
  EXPECT_TRUE(alone.anchored_at_sync());

  AutoRange::Options options = short_periods();
  options.begins_a_recording = [](std::uint64_t signature) { return signature == 10; };
  AutoRange aligned(options);
  const Window w = expect_recorded(aligned, seq, step.size());
  EXPECT_EQ(seq[w.begin], 10u);
  EXPECT_EQ(w.begin, from_sync.begin + 3);  // the same period, three tasks later
  EXPECT_FALSE(aligned.anchored_at_sync());

  // 11 begins a live recording but occurs twice in this step: the window stays at the sync.
  const std::vector<std::uint64_t> twice = {10, 11, 12, kSync, 13, 11, kSync};
  std::vector<std::uint64_t> other = {13, 11, kSync};
  const auto steady_twice = repeat(twice, 5);
  other.insert(other.end(), steady_twice.begin(), steady_twice.end());
  options.begins_a_recording = [](std::uint64_t signature) { return signature == 11; };
  AutoRange recurring(options);
  const Window stays = expect_recorded(recurring, other, twice.size());
  EXPECT_EQ(other[stays.begin], 13u);
  EXPECT_TRUE(recurring.anchored_at_sync());
}

// Steps of two kinds that begin alike (an inference service's batch lengths): three of one are
// found, the window holds the other. Its fingerprint is the other's (what nimble run registers when
// it writes such a window after all), not the period found's, which stays free to be recorded.
TEST(AutoRange, AWindowThatHoldsAnotherStepHasThatStepsFingerprint) {
  const std::vector<std::uint64_t> a = {1, 11, 12, 13, kSync}, b = {1, 21, 22, 23, kSync};
  std::vector<std::uint64_t> seq = repeat(a, 3);
  seq.insert(seq.end(), b.begin(), b.end());
  AutoRange range(short_periods());
  const Window w = run(range, seq);
  ASSERT_TRUE(w.found);
  EXPECT_TRUE(range.diverged());
  EXPECT_EQ(std::vector<std::uint64_t>(seq.begin() + static_cast<long>(w.begin), seq.begin() + static_cast<long>(w.end)), b);
  EXPECT_EQ(range.fingerprint(), period_fingerprint(repeat(a, 1), a.size()));
  EXPECT_EQ(range.window_fingerprint(), period_fingerprint(b, b.size()));
  // A window that repeats the period has the period's fingerprint.
  AutoRange steady(short_periods());
  const Window same = run(steady, repeat(a, 4));
  ASSERT_TRUE(same.found);
  EXPECT_FALSE(steady.diverged());
  EXPECT_EQ(steady.window_fingerprint(), steady.fingerprint());
}

// An inference service's steps of three batch lengths drawn at random (bucketed_inference.py's
// shape: 220 tasks, the first two and a recurring fill kernel alike, a copy and a sync mid-step and
// at the end), looked at as nimble run does: each written window's fingerprint becomes known, the
// range looks again for the next iteration, and windows that did not repeat their period go
// through DivergedWindows. Every length is recorded once, none twice. (Registered under the period
// found, a window written after all put one length's step in another's name: in 11 of these 20
// runs a length was never recorded, and 11 windows were written twice.)
TEST(DivergedWindows, EveryBatchLengthDrawnAtRandomIsRecordedOnce) {
  const auto step = [](int length) {
    std::vector<std::uint64_t> s;
    for (std::uint64_t i = 0; i < 220; ++i) {
      if (i == 32 || i == 218) s.push_back(kCopy);
      else if (i == 33 || i == 219) s.push_back(kSync);
      else if (i == 0 || i == 34 || i == 35) s.push_back(7);  // the fill kernel
      else if (i == 1) s.push_back(8);
      else s.push_back(10000 + 10 * i + static_cast<std::uint64_t>(length));
    }
    return s;
  };
  int all_lengths = 0;
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::set<std::uint64_t> known;
    AutoRange::Options o;
    o.remember_diverged = true;
    o.iteration = 2;
    o.known = [&known](std::uint64_t f) { return known.count(f) > 0; };
    AutoRange range(o);
    DivergedWindows diverged;
    std::set<std::vector<std::uint64_t>> written;
    std::vector<std::uint64_t> window;
    bool open = false;
    std::uint32_t traffic = seed;
    for (int k = 0; k < 300; ++k) {
      traffic = traffic * 1103515245u + 12345u;
      for (std::uint64_t t : step(static_cast<int>((traffic >> 16) % 3))) {
        const Action a = range.on_task(t, t == kSync, t != kSync && t != kCopy);
        if (a == Action::BeginBefore || a == Action::BeginBeforeEndAfter) {
          open = true;
          window.clear();
        }
        if (open) window.push_back(t);
        if (!open || (a != Action::EndAfter && a != Action::BeginBeforeEndAfter)) continue;
        open = false;
        if (diverged.let_go(range, o.known)) {
          range.restart();
          continue;
        }
        EXPECT_TRUE(written.insert(window).second) << "seed " << seed << ", step " << k << ": written twice";
        known.insert(DivergedWindows::fingerprint_of(range));
        range.restart(1);
      }
    }
    std::set<std::uint64_t> lengths;  // the third task tells a step's length
    for (const auto& w : written) {
      if (w.size() == 220) lengths.insert(w[2]);
    }
    all_lengths += lengths.size() == 3;
  }
  EXPECT_GE(all_lengths, 18);  // (19 of 20)
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

TEST(AutoRange, AStepRepeatedBetweenRareSyncsIsTheIteration) {
  // Gradient accumulation with the loss read every 5 steps: between two syncs, a zeroing kernel,
  // then 5 identical steps (each 4 micro-batches of the same 3 kernels, then 2 optimizer kernels),
  // then the loss is reduced, copied to the host and synced.
  std::vector<std::uint64_t> step;
  for (int micro = 0; micro < 4; ++micro) step.insert(step.end(), {10, 11, 12});
  step.insert(step.end(), {20, 21});
  std::vector<std::uint64_t> logged = {30};  // running.zero_()
  for (int s = 0; s < 5; ++s) logged.insert(logged.end(), step.begin(), step.end());
  logged.insert(logged.end(), {31, kCopy, kSync});
  std::vector<std::uint64_t> seq = {50, kSync};  // set-up
  for (int i = 0; i < 6; ++i) seq.insert(seq.end(), logged.begin(), logged.end());

  AutoRange::Options options = short_periods();
  options.sub_period_cover = 0.8;  // the synthetic period is short: its head and tail are 4 of 74 entries
  options.sub_period_min_tasks = 4;  // and so are its blocks
  AutoRange range(options);
  const Window w = run(range, seq);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), step.size());
  EXPECT_EQ(range.sync_period(), logged.size());
  EXPECT_FALSE(range.diverged());
  ASSERT_EQ(w.end - w.begin, step.size());
  // Found at the end of the first stretch between two syncs (not three): opens on the second
  // stretch's first step, after the zeroing kernel that follows the sync.
  EXPECT_EQ(w.begin, 2 + logged.size() + 1);
  EXPECT_EQ(seq[w.begin - 1], 30u);
  EXPECT_EQ(seq[w.begin - 2], kSync);
  EXPECT_TRUE(std::equal(step.begin(), step.end(), seq.begin() + static_cast<std::ptrdiff_t>(w.begin)));

  // Without the sub-period rule the whole stretch between syncs is the iteration.
  options.sub_period_cover = 0;
  AutoRange whole(options);
  const Window v = run(whole, seq);
  ASSERT_TRUE(v.found);
  EXPECT_EQ(whole.period(), logged.size());
  EXPECT_EQ(whole.sync_period(), 0u);
}

// Gradient accumulation as grad_accum.py writes it, at realistic sizes: steps of four identical
// micro-batches (150 kernels each) and an optimizer tail (100 kernels), the first step's optimizer
// different (its state is made), the loss read on the host every 10 steps. The step is found
// while the program is quiet, before the first loss read, not at the second read 10 steps later;
// and the micro-batches, repeated inside each step, are not taken for it.
TEST(AutoRange, AStepIsFoundWhileTheProgramIsQuietBetweenRareSyncs) {
  std::vector<std::uint64_t> micro, step;
  for (std::uint64_t k = 0; k < 150; ++k) micro.push_back(100 + k);
  for (int m = 0; m < 4; ++m) step.insert(step.end(), micro.begin(), micro.end());
  for (std::uint64_t k = 0; k < 100; ++k) step.push_back(500 + k);
  std::vector<std::uint64_t> first = step;
  for (std::uint64_t k = 0; k < 20; ++k) first.push_back(700 + k);  // AdamW makes its state
  std::vector<std::uint64_t> seq = {50, kCopy, kSync};                // set-up
  std::size_t first_read = 0;
  for (int s = 0; s < 30; ++s) {
    const auto& body = s == 0 ? first : step;
    seq.insert(seq.end(), body.begin(), body.end());
    if ((s + 1) % 10 == 0) {
      if (!first_read) first_read = seq.size();
      seq.insert(seq.end(), {kCopy, kSync});
    }
  }
  AutoRange range(AutoRange::Options{});
  const Window w = expect_recorded(range, seq, step.size());
  EXPECT_LT(w.end, first_read);  // recorded before the program's first loss read
  EXPECT_TRUE(std::equal(step.begin(), step.end(), seq.begin() + static_cast<std::ptrdiff_t>(w.begin)));

  // Without the quiet look, the stretch between the first two reads finds it.
  AutoRange later(only_at_syncs());
  EXPECT_GT(expect_recorded(later, seq, step.size()).begin, first_read);
}

// A JAX training script as the H200 showed it (2026-11-28, NIMBLE_DEBUG's last calls): XLA's
// autotuning syncs every few tasks at start-up, compiling and loading the step issues a few hundred
// tasks more without a sync, and then 60 steps of 28 tasks never sync (the losses are read at the
// end). Quiet by the program's own measure, the step is found in time to be replayed; with the
// fixed measure (4,096 tasks since the last sync) it never was.
TEST(AutoRange, ALoopThatNeverSyncsAfterAStartUpThatSyncedOftenIsFoundSoon) {
  std::vector<std::uint64_t> seq;
  for (std::uint64_t k = 0; k < 200; ++k) seq.insert(seq.end(), {3000 + k, kCopy, kSync});  // autotuning
  for (std::uint64_t k = 0; k < 400; ++k) seq.push_back(5000 + k % 97);                  // loading the step
  const std::size_t loop = seq.size();
  std::vector<std::uint64_t> step = {kCopy, kCopy};
  for (std::uint64_t k = 0; k < 26; ++k) step.push_back(100 + k);
  for (int s = 0; s < 60; ++s) seq.insert(seq.end(), step.begin(), step.end());
  for (int k = 0; k < 30; ++k) seq.push_back(kSync);  // the losses read at exit
  AutoRange range(AutoRange::Options{});
  const Window w = expect_recorded(range, seq, step.size());
  EXPECT_LT(w.end, loop + 40 * step.size());  // 20 steps or more left to replay
  EXPECT_GE(w.begin, loop);
  // Its phase: the run after the last sync began where the set-up's tasks stopped repeating.
  const std::vector<std::uint64_t> recorded(seq.begin() + static_cast<std::ptrdiff_t>(w.begin),
                                            seq.begin() + static_cast<std::ptrdiff_t>(w.end));
  std::vector<std::uint64_t> sorted_recorded = recorded, sorted_step = step;
  std::sort(sorted_recorded.begin(), sorted_recorded.end());
  std::sort(sorted_step.begin(), sorted_step.end());
  EXPECT_EQ(sorted_recorded, sorted_step);  // one whole step, whatever its phase

  // A program that synced only once before is quiet after the fixed 4,096 tasks: nothing here.
  std::vector<std::uint64_t> once(seq.begin() + 3 * 199, seq.end());
  AutoRange fixed(AutoRange::Options{});
  EXPECT_FALSE(run(fixed, once).found);
}

// Gradient accumulation (the test above's sizes) after a start-up that synced often (parameters
// uploaded one by one): the micro-batches, repeated inside each step, are still not recorded for
// the step, though the program counts as quiet early.
TEST(AutoRange, MicroBatchesAreNotTakenForTheStepAfterAStartUpThatSyncedOften) {
  std::vector<std::uint64_t> micro, step;
  for (std::uint64_t k = 0; k < 150; ++k) micro.push_back(100 + k);
  for (int m = 0; m < 4; ++m) step.insert(step.end(), micro.begin(), micro.end());
  for (std::uint64_t k = 0; k < 100; ++k) step.push_back(500 + k);
  std::vector<std::uint64_t> seq;
  for (std::uint64_t k = 0; k < 50; ++k) seq.insert(seq.end(), {3000 + k, kCopy, kSync});  // parameter uploads
  for (int s = 0; s < 30; ++s) {
    seq.insert(seq.end(), step.begin(), step.end());
    if ((s + 1) % 10 == 0) seq.insert(seq.end(), {kCopy, kSync});
  }
  AutoRange range(AutoRange::Options{});
  const Window w = expect_recorded(range, seq, step.size());
  EXPECT_LT(w.end, 150 + 10 * step.size());  // before the first loss read (a micro-batch may be a
                                              // candidate first, one that never opens a window)
}

TEST(PeriodExplaining, TheStepExplainsALongSpanItsRepeatedLayersDoNot) {
  // Steps of three identical layers and a head; the layers alone explain the last 9 entries.
  const std::vector<std::uint64_t> step = {1, 2, 3, 1, 2, 3, 1, 2, 3, 9};
  std::vector<std::uint64_t> seq = repeat(step, 4);
  seq.insert(seq.end(), {1, 2, 3, 1, 2, 3, 1, 2, 3});
  EXPECT_EQ(period_explaining(seq, 9, 3, 100), 3u);    // a short span: the layers do
  EXPECT_EQ(period_explaining(seq, 40, 3, 100), 10u);  // most of it: only the step
  EXPECT_EQ(period_explaining(seq, 50, 3, 100), 0u);   // more than there is
  EXPECT_EQ(period_explaining(seq, 40, 3, 9), 0u);     // the step is above max_period
  const std::vector<bool> no_kernels(seq.size(), false);
  EXPECT_EQ(period_explaining(seq, 40, 3, 100, 0, &no_kernels), 0u);
}

// The scan skips periods whose first comparison fails, several at a time: it must find what
// trying every period in turn finds, whatever the lengths (the last period, one past a multiple of
// four, the longest allowed), spans, minimum spans and kernel marks.
TEST(PeriodExplaining, FindsWhatTryingEveryPeriodFinds) {
  auto every_period = [](const std::vector<std::uint64_t>& seq, std::size_t span, std::size_t repeats,
                         std::size_t max_period, std::size_t min_span, const std::vector<bool>* kernel) -> std::size_t {
    const std::size_t n = seq.size();
    for (std::size_t p = 1; p <= std::min(max_period, n / repeats); ++p) {
      const std::size_t needed = std::max(span, std::max(repeats, (min_span + p - 1) / p) * p);
      if (needed > n) continue;
      bool run = true;
      for (std::size_t i = 0; i + p < needed && run; ++i) run = seq[n - 1 - i] == seq[n - 1 - i - p];
      bool launches = !kernel;
      for (std::size_t k = n - p; k < n && !launches; ++k) launches = (*kernel)[k];
      if (run && launches) return p;
    }
    return 0;
  };
  Lcg next{12345};
  int found = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::size_t period = 1 + next() % 23, copies = 2 + next() % 4, tail = next() % 3;
    std::vector<std::uint64_t> block(period);
    for (auto& v : block) v = next() % 3;  // few values: many periods pass the first comparison
    std::vector<std::uint64_t> seq;
    for (std::size_t i = 0, head = next() % 7; i < head; ++i) seq.push_back(next() % 3);
    for (std::size_t c = 0; c < copies; ++c) seq.insert(seq.end(), block.begin(), block.end());
    seq.insert(seq.end(), block.begin(), block.begin() + static_cast<std::ptrdiff_t>(std::min(tail, period)));
    std::vector<bool> kernel(seq.size());
    for (std::size_t k = 0; k < kernel.size(); ++k) kernel[k] = next() % 4 == 0;
    const std::size_t span = next() % (seq.size() + 2), repeats = 2 + next() % 2, min_span = next() % 12;
    const std::size_t max_period = 1 + next() % 30;
    EarlierOccurrences earlier;  // (from where the last entry occurred before)
    PeriodCandidates candidates;  // (AutoRange's way: from where the last kGram entries did, or the last for short p)
    for (std::uint64_t v : seq) {
      earlier.push(v);
      candidates.push(v);
    }
    const std::vector<std::size_t> distances = earlier.distances(max_period);
    const std::vector<bool>* const kinds[] = {nullptr, &kernel};
    for (const std::vector<bool>* marks : kinds) {
      const std::size_t want = every_period(seq, span, repeats, max_period, min_span, marks);
      ASSERT_EQ(period_explaining(seq, span, repeats, max_period, min_span, marks), want)
          << "round " << round << ", " << seq.size() << " entries";
      ASSERT_EQ(period_explaining(seq, distances, span, repeats, max_period, min_span, marks), want)
          << "round " << round << ", from earlier occurrences";
      ASSERT_EQ(period_explaining(seq, candidates.distances(max_period), span, repeats, max_period, min_span, marks), want)
          << "round " << round << ", from the candidates";
      found += want != 0;
    }
  }
  EXPECT_GT(found, 1000);  // the rounds found periods, not only none
  EXPECT_EQ(period_explaining({}, 0, 3, 100), 0u);
}

// Where the log's last entry occurred before, as AutoRange keeps it beside a history whose front
// it drops now and then: the same distances as comparing every one, within what is kept.
TEST(EarlierOccurrences, GivesEveryDistanceBackToTheLastEntryWithinTheLogKept) {
  Lcg next{99};
  EarlierOccurrences earlier;
  std::vector<std::uint64_t> log;
  for (int step = 0; step < 20000; ++step) {
    // Mostly a few values, sometimes a new one each time (a shape that keeps changing).
    const std::uint64_t v = next() % 10 == 0 ? 1000 + static_cast<std::uint64_t>(step) : next() % 5;
    log.push_back(v);
    earlier.push(v);
    if (next() % 97 == 0) {  // the front goes, as AutoRange trims its history
      const std::size_t count = next() % (log.size() + 1);
      log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(count));
      earlier.drop_front(count);
    }
    if (log.empty()) {
      EXPECT_TRUE(earlier.distances(100).empty());
      continue;
    }
    const std::size_t longest = next() % 60;
    std::vector<std::size_t> want;
    for (std::size_t p = 1; p <= longest && p < log.size(); ++p) {
      if (log[log.size() - 1 - p] == log.back()) want.push_back(p);
    }
    ASSERT_EQ(earlier.distances(longest), want) << "step " << step << ", " << log.size() << " kept";
  }
  earlier.clear();
  EXPECT_TRUE(earlier.distances(10).empty());
  earlier.push(7);
  earlier.push(7);
  EXPECT_EQ(earlier.distances(10), (std::vector<std::size_t>{1}));  // nothing from before the clear
}

// The candidates AutoRange tries hold every period there is, for periods longer than the gram
// too, in a log whose front goes now and then: period_explaining finds from them what trying
// every period finds.
TEST(PeriodCandidates, HoldEveryPeriodOfTheLogKept) {
  Lcg next{7};
  PeriodCandidates candidates;
  std::vector<std::uint64_t> log;
  int found = 0, found_long = 0;
  for (int block_round = 0; block_round < 400; ++block_round) {
    // A block of up to 80 entries from few values, repeated 2-4 times, with noise between blocks.
    const std::size_t period = 1 + next() % 80, copies = 2 + next() % 3;
    std::vector<std::uint64_t> block(period);
    for (auto& v : block) v = next() % 4;
    for (std::size_t i = 0, noise = next() % 5; i < noise; ++i) block.insert(block.begin(), 10 + next() % 3);
    for (std::size_t c = 0; c < copies; ++c) {
      for (std::uint64_t v : block) {
        log.push_back(v);
        candidates.push(v);
        if (next() % 500 == 0) {  // the front goes, as AutoRange trims its history
          const std::size_t count = next() % (log.size() + 1);
          log.erase(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(count));
          candidates.drop_front(count);
        }
        if (log.empty() || next() % 7 != 0) continue;
        const std::size_t max_period = 1 + next() % 120, span = next() % 60, repeats = 2 + next() % 2;
        const std::size_t min_span = next() % 40;
        const std::size_t want = period_explaining(log, span, repeats, max_period, min_span);
        ASSERT_EQ(period_explaining(log, candidates.distances(max_period), span, repeats, max_period, min_span), want)
            << "round " << block_round << ", " << log.size() << " kept";
        found += want != 0;
        found_long += want >= PeriodCandidates::kGram;
      }
    }
  }
  EXPECT_GT(found, 500);
  EXPECT_GT(found_long, 200);  // periods the grams hold, not only the short ones checked directly
  candidates.clear();
  EXPECT_TRUE(candidates.distances(10).empty());
}

// A mixture of experts reads each expert's token count: the same copy and sync every few tasks,
// amid launches whose shapes follow the routing. Every earlier sync is a distance at which the
// last entry occurred before; few are one at which the last kGram entries did.
TEST(PeriodCandidates, AreFewWhereOnlyTheSyncRecursAmidShapesThatFollowTheData) {
  Lcg next{3};
  EarlierOccurrences earlier;
  PeriodCandidates candidates;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t v = i % 8 == 7 ? kSync : i % 2 == 0 ? 5000 + next() % 256 : 7;
    earlier.push(v);
    candidates.push(v);
  }
  EXPECT_GT(earlier.distances(1 << 15).size(), 2000u);
  EXPECT_LT(candidates.distances(1 << 15).size(), 4u);
}

TEST(AutoRange, IdenticalLayersWithAHeadAreNotASubPeriod) {
  // Twelve identical blocks, an embedding before and a head after: the blocks cover 36 of 41
  // entries (88%), below the default 98%: the iteration stays whole.
  std::vector<std::uint64_t> iteration = {5};
  for (int block = 0; block < 12; ++block) iteration.insert(iteration.end(), {10, 11, 12});
  iteration.insert(iteration.end(), {20, 21, kCopy, kSync});
  AutoRange::Options options = short_periods();
  options.sub_period_min_tasks = 3;
  AutoRange range(options);
  const Window w = run(range, repeat(iteration, 6));
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), iteration.size());
  EXPECT_EQ(range.sync_period(), 0u);
}

TEST(AutoRange, ManySmallBlocksAndASyncStayOneIteration) {
  // 100 pairs of kernels, a copy and a sync: 99% one block, but blocks of a few tasks would cost
  // more to replay one by one than they save; with the default minimum block it stays whole.
  std::vector<std::uint64_t> iteration;
  for (int k = 0; k < 100; ++k) iteration.insert(iteration.end(), {10, 11});
  iteration.insert(iteration.end(), {kCopy, kSync});
  AutoRange range(AutoRange::Options{});
  const Window w = run(range, repeat(iteration, 6));
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), iteration.size());
  EXPECT_EQ(range.sync_period(), 0u);
  // A long stretch of big blocks between syncs is cut to one block, with the defaults: found while
  // the program is quiet, inside the first stretch; without that look, at the stretch's sync.
  std::vector<std::uint64_t> step;
  for (std::uint64_t k = 0; k < 600; ++k) step.push_back(100 + k);  // 600 different kernels
  std::vector<std::uint64_t> stretch;
  for (int s = 0; s < 10; ++s) stretch.insert(stretch.end(), step.begin(), step.end());
  stretch.insert(stretch.end(), {kCopy, kSync});
  std::vector<std::uint64_t> seq = {kSync};
  for (int i = 0; i < 4; ++i) seq.insert(seq.end(), stretch.begin(), stretch.end());
  AutoRange big(AutoRange::Options{});
  const Window v = run(big, seq);
  ASSERT_TRUE(v.found);
  EXPECT_EQ(big.period(), step.size());
  EXPECT_EQ(big.sync_period(), 0u);
  EXPECT_LT(v.end, 1 + stretch.size());
  EXPECT_EQ(seq[v.begin], 100u);  // the window opens on a step's first task
  AutoRange cut(only_at_syncs());
  const Window u = expect_recorded(cut, seq, step.size());
  EXPECT_EQ(cut.sync_period(), stretch.size());
  EXPECT_EQ(seq[u.begin], 100u);
}

TEST(AutoRange, AStretchLongerThanTheLongestPeriodIsCutAtAStep) {
  // Four steps of 12,000 different kernels between syncs: 48,002 tasks, more than the longest
  // period looked for at a sync, so the step is found away from any sync. The window still
  // opens on a step's first task (the run's phase after the last sync) and holds no sync.
  std::vector<std::uint64_t> step;
  for (std::uint64_t k = 0; k < 12000; ++k) step.push_back(10000 + k);  // none is kSync or kCopy
  std::vector<std::uint64_t> seq = {kSync};
  for (int stretch = 0; stretch < 3; ++stretch) {
    for (int s = 0; s < 4; ++s) seq.insert(seq.end(), step.begin(), step.end());
    seq.insert(seq.end(), {kCopy, kSync});
  }
  AutoRange range(AutoRange::Options{});
  const Window w = expect_recorded(range, seq, step.size());
  EXPECT_EQ(seq[w.begin], 10000u);
  EXPECT_EQ(std::count(seq.begin() + static_cast<std::ptrdiff_t>(w.begin), seq.begin() + static_cast<std::ptrdiff_t>(w.end), kSync), 0);
}

TEST(TilingSubPeriod, FindsTheSmallestBlockThatCoversThePeriod) {
  // 2 head entries, 6 blocks of {1,2,3}, 1 tail entry: 18 of 21 entries.
  std::vector<std::uint64_t> seq = {9, 9, 8, 7};
  const std::size_t begin = seq.size();
  for (int i = 0; i < 6; ++i) seq.insert(seq.end(), {1, 2, 3});
  seq.push_back(kSync);
  const std::size_t period = seq.size() - begin + 2;  // includes the last two set-up entries
  const SubPeriod s = tiling_sub_period(seq, period, 3, 0.85);
  EXPECT_EQ(s.period, 3u);
  EXPECT_EQ(s.head, 2u);
  EXPECT_EQ(tiling_sub_period(seq, period, 3, 0.9).period, 0u);  // 18 of 21 is below 90%
  EXPECT_EQ(tiling_sub_period(seq, period, 7, 0.85).period, 0u); // only 6 blocks
  std::vector<bool> no_kernels(seq.size(), false);
  EXPECT_EQ(tiling_sub_period(seq, period, 3, 0.85, 0, &no_kernels).period, 0u);
  EXPECT_EQ(tiling_sub_period(seq, period, 3, 0.85, 4).period, 6u);  // blocks of 3 are too short: pairs of them
  EXPECT_EQ(tiling_sub_period(seq, period, 3, 0).period, 0u);          // off
  // Two whole blocks and most of a third are not three blocks (the last entry of the middle
  // stretch is checked too).
  EXPECT_EQ(tiling_sub_period({1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, kSync}, 12, 3, 0.9).period, 0u);
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

// nimble run looks again when the program leaves its training step at an eval batch's second
// call: the first two calls of that batch ran before detection began, and are primed. Four eval
// batches: the first three (the first primed) are the period, the fourth is recorded.
TEST(AutoRange, PrimedTasksCountAsTheFirstOfTheHistory) {
  const std::vector<std::uint64_t> eval = {kCopy, 7, 8, 9, kSync};
  AutoRange::Options options = short_periods();
  options.iteration = 2;
  AutoRange range(options);
  range.restart(1);  // a later recording: the period right after the third is recorded
  EXPECT_EQ(range.iteration(), 1);
  range.prime({{kCopy, false}, {7, true}});
  std::vector<std::uint64_t> seq(eval.begin() + 2, eval.end());  // the rest of the first batch
  const auto more = repeat(eval, 3);
  seq.insert(seq.end(), more.begin(), more.end());
  seq.insert(seq.end(), {kCopy, 1, 2, 3, kSync});  // then the training step again
  const Window w = run(range, seq);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), eval.size());
  EXPECT_FALSE(range.diverged());
  EXPECT_EQ(w.begin, 3 + 2 * eval.size());  // the fourth batch
  EXPECT_EQ(range.tasks_seen(), 2 + seq.size());

  // Without the primed calls, the first batch is cut: three whole batches end with the fourth,
  // and the window opens on the training step, which begins with the same copy.
  AutoRange unprimed(short_periods());
  unprimed.restart(1);
  const Window u = run(unprimed, seq);
  ASSERT_TRUE(u.found);
  EXPECT_TRUE(unprimed.diverged());
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

// A loop that reads its result only every so many iterations, before which the program never
// synchronised (run_loop --sync-every on the H200): the window begins where the loop's run of
// copies began, its input copy, wherever the periodic look found the period. Cut elsewhere, the
// recorded iteration ended inside the program's and fell back at every read.
TEST(AutoRange, WithoutAnySyncTheIterationBeginsWhereTheLoopBegan) {
  AutoRange::Options options = short_periods();
  options.check_every = 40;  // the looks come 40 tasks apart: none at an iteration's start
  AutoRange range(options);
  std::vector<std::uint64_t> iteration = {kCopy};
  for (std::uint64_t k = 0; k < 15; ++k) iteration.push_back(100 + k);
  const Window w = expect_recorded(range, repeat(iteration, 12), 16);
  EXPECT_EQ(w.begin % 16, 0u) << "the window began at task " << w.begin;
}

// The result read every 128 iterations after a kernel whose launch shape follows the data (a loss
// over a data-dependent count of rows), syncs about 2,000 tasks apart: no period ends at a sync, and
// the stretch is never quiet by the usual measure (a sync comes before twice the gap). After a look
// at a sync that found nothing, the next stretch is looked at halfway through, and the window opens
// where an iteration begins after the sync, at its input copy.
TEST(AutoRange, ALoopWhoseReadsFollowWorkThatNeverRepeatsIsFoundHalfwayBetweenThem) {
  std::vector<std::uint64_t> seq = {7, kCopy, kSync};  // set-up: a kernel, an upload, a sync
  std::vector<std::uint64_t> iteration = {kCopy};
  for (std::uint64_t k = 0; k < 15; ++k) iteration.push_back(100 + k);
  for (std::uint64_t read = 0; read < 12; ++read) {
    const auto block = repeat(iteration, 128);
    seq.insert(seq.end(), block.begin(), block.end());
    seq.insert(seq.end(), {500 + read * 7919 % 97, kCopy, kSync});
  }
  AutoRange range({});
  const Window w = expect_recorded(range, seq, 16);
  EXPECT_EQ(seq[w.begin], kCopy) << "the window began at task " << w.begin;
  EXPECT_EQ(seq[w.begin + 1], 100u);
  EXPECT_LT(w.begin, 5u * (128 * 16 + 3)) << "found only after " << w.begin << " tasks";
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

// nimble run's minimum: a loop shorter than `shortest` is passed over, and so are longer periods
// made of its copies, but a step that ends with that loop is still found whole.
TEST(PeriodExplaining, ALoopShorterThanTheShortestIsPassedOverNotAStepThatEndsWithIt) {
  const std::vector<std::uint64_t> loop = repeat({1, 2, 3}, 12);
  std::size_t short_loop = 0;
  EXPECT_EQ(period_explaining(loop, 0, 3, 100), 3u);
  EXPECT_EQ(period_explaining(loop, {3, 6, 9, 12}, 0, 3, 100, 0, nullptr, 16, &short_loop), 0u);
  EXPECT_EQ(short_loop, 3u);
  // A step of four distinct tasks and then 60 of one: its copies at 16 to 20 (all the one task)
  // are the short loop again; the step (64) holds more.
  std::vector<std::uint64_t> step = {10, 11, 12, 13};
  step.insert(step.end(), 60, 7);
  const std::vector<std::uint64_t> seq = repeat(step, 3);
  std::vector<std::size_t> distances;
  for (std::size_t p = 1; p <= 64; ++p) distances.push_back(p);  // (each is where 7 occurred before)
  EXPECT_EQ(period_explaining(seq, distances, 0, 3, 100, 32), 1u);
  short_loop = 0;
  EXPECT_EQ(period_explaining(seq, distances, 0, 3, 100, 32, nullptr, 16, &short_loop), 64u);
  EXPECT_EQ(short_loop, 1u);
  // A shortest the step itself falls below: nothing.
  EXPECT_EQ(period_explaining(seq, distances, 0, 3, 100, 32, nullptr, 65), 0u);
}

// nimble run stops looking for good once only known periods are found and none is live. A loop
// inside a step (a decoder's time steps, recorded and dropped) is found known while the program is
// in it, and nothing is found between; a step recorded and dropped is found known at every look
// for as long as the program goes on. known_streak() tells the two apart.
TEST(AutoRange, LooksThatFindOnlyKnownPeriodsAreCountedForAsLongAsTheyLast) {
  std::vector<std::uint64_t> step;
  for (std::uint64_t k = 0; k < 40; ++k) step.push_back(500 + k);
  std::vector<std::uint64_t> inner;
  for (std::uint64_t k = 0; k < 43; ++k) inner.push_back(700 + k);
  for (int t = 0; t < 24; ++t) step.insert(step.end(), inner.begin(), inner.end());
  for (std::uint64_t k = 0; k < 400; ++k) step.push_back(3000 + k);  // 1472 tasks, no sync
  const std::uint64_t inner_fingerprint = period_fingerprint(inner, inner.size());
  std::uint64_t step_fingerprint = 0;
  AutoRange::Options options = short_periods();
  options.known = [&](std::uint64_t f) { return f == inner_fingerprint || f == step_fingerprint; };
  {
    // Inside the loop of the first step only the known loop is found; looks after it find
    // nothing (two steps seen), which ends the streak; then the step is found.
    AutoRange range(options);
    std::vector<std::uint64_t> seq = step;
    seq.insert(seq.end(), step.begin(), step.begin() + 40 + 43 * 20);
    EXPECT_FALSE(run(range, seq).found);
    EXPECT_GE(range.known_in_a_row(), 3u);
    EXPECT_GT(range.known_streak(), 0u);
    EXPECT_LT(range.known_streak(), inner.size() * 24);
    seq.assign(step.begin() + 40 + 43 * 20, step.end());
    EXPECT_FALSE(run(range, seq).found);
    EXPECT_EQ(range.known_streak(), 0u);
    const Window w = run(range, repeat(step, 3));
    ASSERT_TRUE(w.found);
    EXPECT_EQ(range.period(), step.size());
  }
  // The step recorded too, and the program stays in it: the streak grows as long as it runs.
  step_fingerprint = period_fingerprint(step, step.size());
  AutoRange range(options);
  EXPECT_FALSE(run(range, repeat(step, 16)).found);
  EXPECT_GE(range.known_in_a_row(), 3u);
  EXPECT_GE(range.known_streak(), 12 * step.size());
  EXPECT_EQ(range.phase(), AutoRange::Phase::Detecting);
}

// A step shorter than sub_period_min_tasks between rare syncs: the block found at a sync holds two
// steps. Once the step is recorded (and dropped), that block is the step again, not a new period.
TEST(AutoRange, ABlockMadeOfCopiesOfAKnownStepIsKnown) {
  std::vector<std::uint64_t> step;
  for (std::uint64_t k = 0; k < 318; ++k) step.push_back(4000 + k % 300);
  std::vector<std::uint64_t> seq = {kCopy, kSync};  // (a program that syncs is looked at its syncs)
  for (int i = 0; i < 64; ++i) {
    seq.insert(seq.end(), step.begin(), step.end());
    if (i % 16 == 15) seq.insert(seq.end(), {kCopy, kSync});
  }
  AutoRange::Options options;
  options.quiet_after = 0;  // found at syncs only
  AutoRange fresh(options);
  ASSERT_TRUE(run(fresh, seq).found);
  EXPECT_EQ(fresh.period(), 2 * step.size());  // the smallest block of at least 512 tasks
  const std::uint64_t step_fingerprint = period_fingerprint(step, step.size());
  options.known = [&](std::uint64_t f) { return f == step_fingerprint; };
  AutoRange range(options);
  EXPECT_FALSE(run(range, seq).found);
  EXPECT_GE(range.known_in_a_row(), 2u);
  EXPECT_GT(range.known_streak(), 0u);
}

TEST(AutoRange, ALoopShorterThanTheShortestIsNotRecordedALongerStepIs) {
  AutoRange::Options options;
  options.shortest = 16;
  AutoRange range(options);
  EXPECT_FALSE(run(range, repeat({kCopy, 1, 2, 3, kCopy, kSync}, 40)).found);  // a 6-task step
  EXPECT_EQ(range.phase(), AutoRange::Phase::Detecting);
  EXPECT_EQ(range.short_loop(), 6u);
  // The program moves on to a step of 18 tasks: found and recorded, after 3 copies at a sync.
  std::vector<std::uint64_t> step = {kCopy};
  for (std::uint64_t k = 1; k <= 16; ++k) step.push_back(k);
  step.push_back(kSync);
  const Window w = run(range, repeat(step, 5));
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), 18u);
  EXPECT_EQ(w.end - w.begin, 18u);
  EXPECT_EQ(range.short_loop(), 6u);  // what was passed over, kept
}

// Each look walks the short loop's run: inside one, nothing is looked at until it breaks (a 7-task
// loop cost 50 us a step after 30000 steps when every sync was). A step that ends with the loop
// is found all the same.
TEST(AutoRange, InsideAShortLoopNothingIsLookedAtUntilItBreaks) {
  AutoRange::Options options;
  options.shortest = 8;
  AutoRange range(options);
  run(range, repeat({kCopy, 1, 2, 3, kCopy, kSync}, 1000));  // 1000 syncs in 6000 tasks
  EXPECT_EQ(range.short_loop(), 6u);
  EXPECT_EQ(range.looks(), 6u);  // the sixth sync's found the loop (32 tasks)
  // Steps of 100 distinct tasks and 20 of the loop: found after three, though each ends inside it.
  std::vector<std::uint64_t> step;
  for (std::uint64_t k = 0; k < 100; ++k) step.push_back(3000 + k);
  for (int i = 0; i < 20; ++i) step.insert(step.end(), {kCopy, 1, 2, 3, kCopy, kSync});
  const Window w = run(range, repeat(step, 5));
  ASSERT_TRUE(w.found);
  EXPECT_EQ(range.period(), step.size());
  EXPECT_LT(range.looks(), 6u + 5 * 20);
  // Without a minimum the loop is taken at its sixth sync (32 tasks), after as many looks.
  AutoRange::Options any_length;
  AutoRange taken(any_length);
  ASSERT_TRUE(run(taken, repeat({kCopy, 1, 2, 3, kCopy, kSync}, 20)).found);
  EXPECT_EQ(taken.looks(), 6u);
}

// An eval pass whose first batch differs from the other three (the epochs program in
// deterministic mode on the H100: a 143-task eval batch found only at the pass's end, the window
// then opened on the next training step, let go, every epoch). nimble run remembers the period
// that diverged: in the next pass its second batch alone is enough, and the third is recorded.
TEST(AutoRange, AnEvalBatchFoundTooLateIsRecordedInTheNextPass) {
  // Each batch syncs inside too (a pageable input copy), as the GPU program's do; the first one
  // launches one more kernel at its end.
  const std::vector<std::uint64_t> train = {kCopy, kSync, 1, 2, 3, 4, kSync},
                                   first_eval = {kCopy, kSync, 7, 8, 9, 6, kSync}, eval = {kCopy, kSync, 7, 8, 9, kSync};
  auto epoch_end = [&] {
    std::vector<std::uint64_t> seq = first_eval;
    const auto rest = repeat(eval, 3);
    seq.insert(seq.end(), rest.begin(), rest.end());
    seq.insert(seq.end(), train.begin(), train.end());  // the next epoch's first training step
    return seq;
  };
  for (const bool remember : {true, false}) {
    AutoRange::Options options = short_periods();
    options.remember_diverged = remember;
    AutoRange range(options);
    range.restart(1);  // a side-exit look, as nimble run asks at the end of the training steps
    const Window late = run(range, epoch_end());
    ASSERT_TRUE(late.found);
    EXPECT_EQ(range.period(), eval.size());
    EXPECT_TRUE(range.diverged());  // three whole batches end with the pass: the window met the training step
    range.restart(1);               // let go; the next epoch's side exit looks again
    const std::size_t before = range.tasks_seen();
    const Window next = run(range, epoch_end());
    if (!remember) {  // the same again: found too late
      EXPECT_TRUE(range.diverged());
      continue;
    }
    ASSERT_TRUE(next.found);
    EXPECT_FALSE(range.diverged());
    EXPECT_EQ(next.begin, first_eval.size() + eval.size()) << before;  // the third batch
    EXPECT_EQ(next.end - next.begin, eval.size());
  }
}

// A remembered period met, then not followed (the program did something else), stays remembered
// when another period is found and recorded meanwhile; and one recorded since (known) is dropped
// from memory without counting as a known find each time it is met.
TEST(AutoRange, ARememberedPeriodOutlivesAnotherRecordingAndIsForgottenOnceKnown) {
  // `other` begins like the eval batch (a window opened on it diverges); `elsewhere` does not.
  const std::vector<std::uint64_t> eval = {kCopy, kSync, 7, 8, 9, kSync}, other = {kCopy, kSync, 1, 2, 3, 4, kSync},
                                   elsewhere = {3, kSync, 1, 2, kSync}, small = {5, 6, 5, kSync};
  std::set<std::uint64_t> known;
  AutoRange::Options options = short_periods();
  options.remember_diverged = true;
  options.known = [&](std::uint64_t fingerprint) { return known.count(fingerprint) > 0; };
  AutoRange range(options);
  auto diverge = repeat(eval, 3);
  diverge.insert(diverge.end(), other.begin(), other.end());
  ASSERT_TRUE(run(range, diverge).found);
  ASSERT_TRUE(range.diverged());
  const std::uint64_t eval_fingerprint = range.fingerprint();
  range.restart(1);
  // Met (the window would open next), not followed; then another period, found and recorded.
  std::vector<std::uint64_t> seq = eval;
  seq.insert(seq.end(), elsewhere.begin(), elsewhere.end());
  const auto smalls = repeat(small, 4);
  seq.insert(seq.end(), smalls.begin(), smalls.end());
  expect_recorded(range, seq, small.size());
  range.restart(1);
  const Window w = expect_recorded(range, repeat(eval, 2), eval.size());  // still remembered
  EXPECT_EQ(w.begin, eval.size());
  // Diverged again elsewhere and written after all (known now): met, it is forgotten uncounted.
  range.restart(1);
  ASSERT_TRUE(run(range, diverge).found);
  range.restart(1);
  known.insert(eval_fingerprint);
  EXPECT_FALSE(run(range, repeat(eval, 2)).found);
  EXPECT_EQ(range.known_in_a_row(), 0u);  // two batches: only the remembered period could find them
  range.restart(1);
  EXPECT_FALSE(run(range, repeat(eval, 2)).found);
  EXPECT_EQ(range.known_in_a_row(), 0u);
}

// A remembered period that diverges again is forgotten: detection needs its three repeats again.
TEST(AutoRange, ARememberedPeriodThatDivergesAgainIsForgotten) {
  const std::vector<std::uint64_t> step = {1, 2, 3, kSync};
  auto seq = repeat(step, 3);
  seq.insert(seq.end(), {1, 7, 3, kSync});  // recorded, diverged
  AutoRange::Options options = short_periods();
  options.remember_diverged = true;
  AutoRange range(options);
  ASSERT_TRUE(run(range, seq).found);
  ASSERT_TRUE(range.diverged());
  range.restart(1);
  // One whole step up to a sync: remembered, the next one is recorded; it diverges again.
  std::vector<std::uint64_t> again = {kSync};
  again.insert(again.end(), step.begin(), step.end());
  again.insert(again.end(), {1, 7, 3, kSync});
  const Window w = run(range, again);
  ASSERT_TRUE(w.found);
  EXPECT_EQ(w.begin, 1 + step.size());
  EXPECT_TRUE(range.diverged());
  range.restart(1);
  EXPECT_FALSE(run(range, again).found);  // forgotten: one step is not a period
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
