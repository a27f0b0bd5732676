// Bit-parallel reachability from one block of source nodes (internal to the scheduler).
//
// A dense V x V reachability matrix does not fit for 100k tasks (1.25 GB), so callers split the
// sources into blocks of a few thousand and run one pass per block: nodes are visited in index
// (topological) order and each node's set of reaching sources, a bitset over the block, is the
// union of its predecessors' sets. Two tricks keep chains and converged regions nearly free:
//  * a set equal to a predecessor's is shared, not copied (in-degree-1 chains cost nothing);
//  * a set holding every source of the block is the "full" marker, and unions with it are free
//    (after a network's loss, every forward task reaches every backward task).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "nimble/scheduler/dag.hpp"

namespace nimble::scheduler::detail {

// A read-only view of one reach set.
class ReachRow {
 public:
  ReachRow(const std::uint64_t* words, std::uint32_t word_count, bool full)
      : words_(words), word_count_(word_count), full_(full) {}
  bool empty() const { return !full_ && words_ == nullptr; }
  bool test(std::uint32_t bit) const {
    if (full_) return true;
    return words_ != nullptr && ((words_[bit >> 6] >> (bit & 63)) & 1U);
  }
  // Calls f(bit) for every member, highest first, until f returns false.
  template <class F>
  void for_each_descending(std::uint32_t bit_count, F&& f) const {
    if (empty()) return;
    for (std::uint32_t w = word_count_; w-- > 0;) {
      std::uint64_t word = full_ ? ~std::uint64_t{0} : words_[w];
      if (full_ && w == word_count_ - 1 && (bit_count & 63)) word &= (std::uint64_t{1} << (bit_count & 63)) - 1;
      while (word) {
        const int top = 63 - std::countl_zero(word);
        if (!f(w * 64 + static_cast<std::uint32_t>(top))) return;
        word &= ~(std::uint64_t{1} << top);
      }
    }
  }

 private:
  const std::uint64_t* words_;
  std::uint32_t word_count_;
  bool full_;
};

class BlockReach {
 public:
  explicit BlockReach(const Adjacency& predecessors)
      : preds_(predecessors), bit_of_(predecessors.nodes(), kNotSource), row_of_(predecessors.nodes(), kEmpty) {}

  // Sources: ascending node indices. Visits every node v in [sources.front(), last] in order:
  //   visitor.inner(v, row): sources reaching v by a path of two or more edges
  //                          (the union over v's predecessors of their reach sets);
  //   visitor.reach(v, row): sources reaching v by a path of one or more edges.
  // bit(p) is p's position in `sources`, or -1 when p is not one of them.
  template <class Visitor>
  void run(std::span<const NodeIndex> sources, NodeIndex last, Visitor& visitor) {
    if (sources.empty()) return;
    const NodeIndex first = sources.front();
    bits_ = static_cast<std::uint32_t>(sources.size());
    words_ = (bits_ + 63) / 64;
    for (std::uint32_t i = 0; i < bits_; ++i) bit_of_[sources[i]] = static_cast<std::int32_t>(i);
    pool_.clear();
    pool_.reserve(std::size_t{words_} * (last - first + 1));
    std::vector<std::uint32_t> distinct;
    for (NodeIndex v = first; v <= last; ++v) {
      const auto preds = preds_[v];
      // Predecessors below the first source cannot be reached from the block.
      const auto relevant = preds.subspan(static_cast<std::size_t>(std::lower_bound(preds.begin(), preds.end(), first) - preds.begin()));
      distinct.clear();
      bool full = false;
      bool has_source_pred = false;
      for (NodeIndex p : relevant) {
        has_source_pred |= bit_of_[p] >= 0;
        const std::uint32_t r = row_of_[p];
        if (r == kFull) full = true;
        else if (r != kEmpty && std::find(distinct.begin(), distinct.end(), r) == distinct.end()) distinct.push_back(r);
      }
      std::uint32_t row;
      if (full) {
        row = kFull;
        visitor.inner(v, view(kFull));
      } else if (distinct.size() <= 1 && !has_source_pred) {
        row = distinct.empty() ? kEmpty : distinct.front();
        visitor.inner(v, view(row));
      } else {
        row = allocate();
        std::uint64_t* out = words(row);
        for (std::uint32_t r : distinct) {
          const std::uint64_t* in = words(r);
          for (std::uint32_t w = 0; w < words_; ++w) out[w] |= in[w];
        }
        visitor.inner(v, view(row));
        for (NodeIndex p : relevant) {
          if (const std::int32_t b = bit_of_[p]; b >= 0) out[b >> 6] |= std::uint64_t{1} << (b & 63);
        }
        // Mark a complete set, and give the row back, so later unions with it cost nothing.
        if (is_complete(out)) {
          pool_.resize(pool_.size() - words_);
          row = kFull;
        }
      }
      row_of_[v] = row;
      visitor.reach(v, view(row));
    }
    for (NodeIndex s : sources) bit_of_[s] = kNotSource;
    std::fill(row_of_.begin() + first, row_of_.begin() + last + 1, kEmpty);
  }

  std::int32_t bit(NodeIndex node) const { return bit_of_[node]; }
  std::uint32_t bit_count() const { return bits_; }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  static constexpr std::uint32_t kFull = 0xFFFFFFFEu;
  static constexpr std::int32_t kNotSource = -1;

  std::uint32_t allocate() {
    const auto row = static_cast<std::uint32_t>(pool_.size() / words_);
    pool_.resize(pool_.size() + words_, 0);
    return row;
  }
  std::uint64_t* words(std::uint32_t row) { return pool_.data() + std::size_t{row} * words_; }
  ReachRow view(std::uint32_t row) {
    if (row == kFull) return {nullptr, words_, true};
    if (row == kEmpty) return {nullptr, words_, false};
    return {words(row), words_, false};
  }
  bool is_complete(const std::uint64_t* row) const {
    std::uint64_t all = ~std::uint64_t{0};
    for (std::uint32_t w = 0; w + 1 < words_; ++w) all &= row[w];
    const std::uint32_t tail_bits = bits_ - (words_ - 1) * 64;
    const std::uint64_t tail_mask = tail_bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << tail_bits) - 1;
    return all == ~std::uint64_t{0} && (row[words_ - 1] & tail_mask) == tail_mask;
  }

  const Adjacency& preds_;
  std::vector<std::int32_t> bit_of_;
  std::vector<std::uint32_t> row_of_;
  std::vector<std::uint64_t> pool_;
  std::uint32_t bits_ = 0;
  std::uint32_t words_ = 0;
};

// Measured on network DAGs: bigger blocks make rows longer and slower to saturate to "full".
inline constexpr std::size_t kMaxBlockSources = 4096;

// How many sources one block may hold so that its reach sets for `nodes` nodes fit `budget_bytes`.
inline std::size_t block_capacity(std::size_t nodes, std::size_t budget_bytes) {
  const std::size_t words = std::max<std::size_t>(1, budget_bytes / 8 / std::max<std::size_t>(nodes, 1));
  return std::clamp<std::size_t>(words * 64, 64, kMaxBlockSources);
}

}  // namespace nimble::scheduler::detail
