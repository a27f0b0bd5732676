#include "detector_tail.hpp"

#include <gtest/gtest.h>

namespace nimble::hooks {
namespace {

TEST(DetectorTail, NumbersSignaturesThreadsAndStreamsInTheOrderTheyCame) {
  DetectorTail tail;
  tail.push(0xaa, /*kernel=*/true, /*host_sync=*/false, /*thread=*/678, /*stream=*/0x10);
  tail.push(0xbb, false, false, 781, 0x20);  // a copy of another thread on another stream
  tail.push(0xaa, true, false, 678, 0x10);
  tail.push(0xcc, false, true, 678, ~0ull);  // a host sync
  EXPECT_EQ(tail.text(), "K0@t0s0 T1@t1s1 K0@t0s0 Y2@t0s2");
}

TEST(DetectorTail, KeepsOnlyTheLastCallsOldestFirst) {
  DetectorTail tail(3);
  for (std::uint64_t i = 0; i < 5; ++i) tail.push(i, true, false, 1, 1);
  EXPECT_EQ(tail.size(), 3u);
  // Calls 2, 3 and 4 remain; numbering starts again with the oldest kept.
  EXPECT_EQ(tail.text(), "K0@t0s0 K1@t0s0 K2@t0s0");
  tail.push(2, true, false, 2, 1);  // call 2's signature again, from a second thread
  EXPECT_EQ(tail.text(), "K0@t0s0 K1@t0s0 K2@t1s0");
}

TEST(DetectorTail, ShowsACopyThatLandsElsewhereFromStepToStep) {
  // Two steps of the same three calls, the second thread's copy after the first kernel in one
  // and after the second in the other: the tokens show it.
  DetectorTail tail;
  for (int step = 0; step < 2; ++step) {
    tail.push(1, true, false, 10, 0);
    if (step == 0) tail.push(3, false, false, 20, 2);
    tail.push(2, true, false, 10, 0);
    if (step == 1) tail.push(3, false, false, 20, 2);
  }
  EXPECT_EQ(tail.text(), "K0@t0s0 T1@t1s1 K2@t0s0 K0@t0s0 K2@t0s0 T1@t1s1");
}

TEST(DetectorTail, EmptyAndZeroCapacityTailsSayNothing) {
  DetectorTail none(0);
  none.push(1, true, false, 1, 1);
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.text(), "");
  EXPECT_EQ(DetectorTail().text(), "");
}

}  // namespace
}  // namespace nimble::hooks
