#include "detector_tail.hpp"

#include <algorithm>

namespace nimble::hooks {
namespace {

// The place of `value` among those numbered so far, numbering it if new.
std::size_t number_of(std::vector<std::uint64_t>& numbered, std::uint64_t value) {
  const auto it = std::find(numbered.begin(), numbered.end(), value);
  if (it != numbered.end()) return static_cast<std::size_t>(it - numbered.begin());
  numbered.push_back(value);
  return numbered.size() - 1;
}

}  // namespace

void DetectorTail::push(std::uint64_t signature, bool kernel, bool host_sync, std::uint64_t thread,
                        std::uint64_t stream) {
  if (capacity_ == 0) return;
  const Call call{signature, thread, stream, kernel ? 'K' : host_sync ? 'Y' : 'T'};
  if (calls_.size() < capacity_) {
    calls_.push_back(call);
    return;
  }
  calls_[next_] = call;
  next_ = (next_ + 1) % capacity_;
}

std::string DetectorTail::text() const {
  std::vector<std::uint64_t> signatures, threads, streams;
  std::string out;
  for (std::size_t i = 0; i < calls_.size(); ++i) {
    const Call& c = calls_[(next_ + i) % calls_.size()];
    if (!out.empty()) out += ' ';
    out += c.kind + std::to_string(number_of(signatures, c.signature)) + "@t" +
           std::to_string(number_of(threads, c.thread)) + "s" + std::to_string(number_of(streams, c.stream));
  }
  return out;
}

}  // namespace nimble::hooks
