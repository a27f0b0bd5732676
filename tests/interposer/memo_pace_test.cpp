// When a memo of library answers rests (memo_pace.hpp): after a window of queries it answered
// fewer than half of, for a rest that doubles while windows keep not paying.
#include "memo_pace.hpp"

#include <gtest/gtest.h>

namespace nimble::hooks {
namespace {

// Asks the pace for `queries` queries, the memo answering one in `every` (0: none) of those it
// sees; returns how many it saw.
std::size_t feed(MemoPace& pace, std::size_t queries, std::size_t every) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < queries; ++i) {
    if (!pace.consult()) continue;
    pace.looked(every != 0 && seen % every == 0);
    ++seen;
  }
  return seen;
}

TEST(MemoPace, AMemoAnsweringMostNeverRests) {
  MemoPace pace;
  EXPECT_EQ(feed(pace, 20 * MemoPace::kWindow, 1), 20 * MemoPace::kWindow);
  EXPECT_EQ(pace.rests(), 0u);
  EXPECT_EQ(pace.rested(), 0u);
  // Half answered is enough.
  EXPECT_EQ(feed(pace, 4 * MemoPace::kWindow, 2), 4 * MemoPace::kWindow);
  EXPECT_EQ(pace.rests(), 0u);
}

TEST(MemoPace, AMemoAnsweringFewRestsLongerAfterEachWindowThatDoesNotPay) {
  MemoPace pace;
  EXPECT_EQ(feed(pace, MemoPace::kWindow, 10), MemoPace::kWindow);  // one in ten: it rests
  EXPECT_EQ(pace.rests(), 1u);
  EXPECT_EQ(feed(pace, MemoPace::kFirstRest, 10), 0u);
  EXPECT_EQ(pace.rested(), MemoPace::kFirstRest);
  EXPECT_EQ(feed(pace, MemoPace::kWindow, 0), MemoPace::kWindow);  // asked again: still no use
  EXPECT_EQ(pace.rests(), 2u);
  EXPECT_EQ(feed(pace, 2 * MemoPace::kFirstRest, 0), 0u);  // twice as long
  EXPECT_TRUE(pace.consult());
}

TEST(MemoPace, AWindowThatPaysEndsTheBackOff) {
  MemoPace pace;
  feed(pace, MemoPace::kWindow, 0);
  feed(pace, MemoPace::kFirstRest, 0);
  feed(pace, MemoPace::kWindow, 1);  // the program's inputs come again now
  EXPECT_EQ(pace.rests(), 1u);
  feed(pace, MemoPace::kWindow, 0);  // and then do not: the first rest's length again
  EXPECT_EQ(pace.rests(), 2u);
  EXPECT_EQ(feed(pace, MemoPace::kFirstRest, 0), 0u);
  EXPECT_TRUE(pace.consult());
}

TEST(MemoPace, RestsAreBounded) {
  MemoPace pace;
  std::size_t longest = 0;
  for (int round = 0; round < 30; ++round) {
    feed(pace, MemoPace::kWindow, 0);
    std::size_t rest = 0;
    while (!pace.consult()) ++rest;
    pace.looked(false);  // (the consult that ended the rest saw a query)
    longest = std::max(longest, rest + 1);
  }
  EXPECT_LE(longest, MemoPace::kLongestRest + 1);
  EXPECT_GE(longest, MemoPace::kLongestRest);
}

}  // namespace
}  // namespace nimble::hooks
