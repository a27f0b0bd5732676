#include "nimble/replayer/comparison.hpp"

#include <gtest/gtest.h>

namespace nimble::replayer {
namespace {

constexpr std::uint64_t kMs = 1000000;

// Runs iterations of `replay_ms` / `plain_ms` through `c`, switching phase at block ends as the
// hooks do; returns the time reached.
std::uint64_t run(Comparison& c, int iterations, std::uint64_t replay_ms, std::uint64_t plain_ms, std::uint64_t t = 0) {
  for (int i = 0; i < iterations; ++i) {
    if (c.block_done()) c.switch_phase();
    c.iteration_began(t, true);
    t += (c.phase() == Phase::Replay ? replay_ms : plain_ms) * kMs;
  }
  return t;
}

TEST(Comparison, AlternatesBlocksAndTimesEachPhaseWithoutTheFirstOfABlock) {
  Comparison c(4);
  EXPECT_EQ(c.phase(), Phase::Replay);
  const std::uint64_t t = run(c, 16, 2, 5);  // R R R R P P P P R R R R P P P P
  c.iteration_began(t, true);               // closes the 16th
  const IterationTimes replay = c.times(Phase::Replay), plain = c.times(Phase::Plain);
  EXPECT_EQ(replay.iterations, 6u);  // 3 per block: the first of each is left out
  EXPECT_EQ(plain.iterations, 6u);
  EXPECT_DOUBLE_EQ(replay.median_ms, 2.0);
  EXPECT_DOUBLE_EQ(plain.median_ms, 5.0);
  EXPECT_DOUBLE_EQ(plain.p90_ms, 5.0);
  // The untimed ones, by why: the first of each block.
  EXPECT_EQ(c.untimed(Phase::Replay).first_of_block, 2u);
  EXPECT_EQ(c.untimed(Phase::Plain).first_of_block, 2u);
  EXPECT_EQ(c.untimed(Phase::Replay).not_whole + c.untimed(Phase::Plain).not_whole, 0u);
}

TEST(Comparison, IterationsThatDidNotRunWholeInTheirPhaseAreNotTimed) {
  Comparison c(10);
  c.iteration_began(0, true);
  c.iteration_began(1 * kMs, true);       // first of the block: not timed
  c.iteration_began(3 * kMs, false);      // the one from 1 to 3 fell back: not timed
  c.iteration_began(6 * kMs, true);       // 3 to 6: timed
  EXPECT_EQ(c.times(Phase::Replay).iterations, 1u);
  EXPECT_DOUBLE_EQ(c.times(Phase::Replay).median_ms, 3.0);
  EXPECT_EQ(c.times(Phase::Plain).iterations, 0u);
  EXPECT_DOUBLE_EQ(c.times(Phase::Plain).median_ms, 0.0);
  EXPECT_EQ(c.untimed(Phase::Replay).not_whole, 1u);
  EXPECT_EQ(c.untimed(Phase::Replay).first_of_block, 1u);
  // One that was not this recording's after all is neither timed nor counted untimed.
  c.not_begun();
  c.iteration_began(7 * kMs, true);
  EXPECT_EQ(c.times(Phase::Replay).iterations, 1u);
  EXPECT_EQ(c.untimed(Phase::Replay).not_whole + c.untimed(Phase::Replay).first_of_block, 2u);
}

TEST(Comparison, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  Comparison c(100);
  std::uint64_t t = 0;
  for (std::uint64_t ms : {9, 1, 2, 3, 4}) {  // the first (9 ms) is the block's first: not timed
    c.iteration_began(t, true);
    t += ms * kMs;
  }
  c.iteration_began(t, true);
  EXPECT_EQ(c.times(Phase::Replay).iterations, 4u);
  EXPECT_DOUBLE_EQ(c.times(Phase::Replay).median_ms, 2.5);
}

}  // namespace
}  // namespace nimble::replayer
