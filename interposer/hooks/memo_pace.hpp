// Whether a memo of a library's answers is worth asking. A lookup costs every query its key (the
// descriptors' contents) and the memo's locks; it pays when the inputs come again. A mixture of
// experts asks cuBLASLt about shapes that follow its routing: 1006 of 21346 heuristics answered from
// memory, and on the H200 the program ran 0.95-0.97 of plain with the memo against 0.98-1.01
// without (docs/benchmarks/unseen-h200-dec01). So the memo is judged over windows of the queries
// it sees: one that answered fewer than half from memory makes it rest (queries go straight to the
// library) for kFirstRest queries, twice as long after each further window that did not pay, up
// to kLongestRest; a window that pays ends the back-off. CUDA-free; not thread-safe (the memo's
// lock guards it).
#pragma once

#include <algorithm>
#include <cstddef>

namespace nimble::hooks {

class MemoPace {
 public:
  static constexpr std::size_t kWindow = 1024;
  static constexpr std::size_t kFirstRest = 4096;
  static constexpr std::size_t kLongestRest = std::size_t{1} << 20;

  // A query comes: true when the memo is to be asked, false while it rests.
  bool consult() {
    if (rest_left_ == 0) return true;
    --rest_left_;
    ++rested_;
    return false;
  }

  // The memo was asked: it answered from memory or not.
  void looked(bool answered) {
    ++window_;
    answered_ += answered ? 1 : 0;
    if (window_ < kWindow) return;
    if (2 * answered_ < window_) {
      rest_ = rest_ == 0 ? kFirstRest : std::min(2 * rest_, kLongestRest);
      rest_left_ = rest_;
      ++rests_;
    } else {
      rest_ = 0;
    }
    window_ = answered_ = 0;
  }

  std::size_t rested() const { return rested_; }  // queries that went to the library while resting
  std::size_t rests() const { return rests_; }    // windows that did not pay

 private:
  std::size_t window_ = 0, answered_ = 0;  // this window's queries asked of the memo, and answered
  std::size_t rest_ = 0;                   // the last rest's length (0: the last window paid)
  std::size_t rest_left_ = 0;
  std::size_t rested_ = 0, rests_ = 0;
};

}  // namespace nimble::hooks
