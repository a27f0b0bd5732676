// Hopcroft-Karp: phases of a BFS that layers the free left vertices' alternating paths, then
// vertex-disjoint shortest augmenting paths found by DFS. The DFS is iterative because chains of
// a 100k-task network give augmenting paths far deeper than a thread's stack.
#include "nimble/scheduler/matching.hpp"

#include <limits>

namespace nimble::scheduler {
namespace {

constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();

class HopcroftKarp {
 public:
  HopcroftKarp(const Adjacency& adj, std::size_t right_count)
      : adj_(adj), left_(adj.nodes()), dist_(left_, kUnreached), next_edge_(left_, 0) {
    m_.right_of_left.assign(left_, kNoNode);
    m_.left_of_right.assign(right_count, kNoNode);
  }

  Matching run() {
    greedy_start();
    while (layer()) {
      for (NodeIndex u = 0; u < left_; ++u) next_edge_[u] = adj_.offsets[u];
      for (NodeIndex u = 0; u < left_; ++u) {
        if (m_.right_of_left[u] == kNoNode && dist_[u] == 0) augment_from(u);
      }
    }
    return std::move(m_);
  }

 private:
  // Most edges of a chain-like graph are matched by a first-fit pass; the phases only fix the rest.
  void greedy_start() {
    for (NodeIndex u = 0; u < left_; ++u) {
      for (NodeIndex v : adj_[u]) {
        if (m_.left_of_right[v] == kNoNode) {
          match(u, v);
          break;
        }
      }
    }
  }

  void match(NodeIndex u, NodeIndex v) {
    if (m_.right_of_left[u] == kNoNode) ++m_.size;
    m_.right_of_left[u] = v;
    m_.left_of_right[v] = u;
  }

  // BFS from all free left vertices; true when some free right vertex is reachable.
  bool layer() {
    queue_.clear();
    for (NodeIndex u = 0; u < left_; ++u) {
      dist_[u] = m_.right_of_left[u] == kNoNode ? 0 : kUnreached;
      if (dist_[u] == 0) queue_.push_back(u);
    }
    bool found = false;
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const NodeIndex u = queue_[head];
      for (NodeIndex v : adj_[u]) {
        const NodeIndex w = m_.left_of_right[v];
        if (w == kNoNode) {
          found = true;
        } else if (dist_[w] == kUnreached) {
          dist_[w] = dist_[u] + 1;
          queue_.push_back(w);
        }
      }
    }
    return found;
  }

  // Iterative DFS along the BFS layers; flips the path when it ends at a free right vertex.
  void augment_from(NodeIndex root) {
    stack_.assign(1, root);
    via_.clear();
    while (!stack_.empty()) {
      const NodeIndex u = stack_.back();
      bool advanced = false;
      while (next_edge_[u] < adj_.offsets[u + 1]) {
        const NodeIndex v = adj_.targets[next_edge_[u]++];
        const NodeIndex w = m_.left_of_right[v];
        if (w == kNoNode) {
          via_.push_back(v);
          for (std::size_t i = 0; i < stack_.size(); ++i) match(stack_[i], via_[i]);
          return;
        }
        if (dist_[w] == dist_[u] + 1) {
          via_.push_back(v);
          stack_.push_back(w);
          advanced = true;
          break;
        }
      }
      if (!advanced) {
        dist_[u] = kUnreached;  // dead end for the rest of this phase
        stack_.pop_back();
        if (!via_.empty()) via_.pop_back();
      }
    }
  }

  const Adjacency& adj_;
  const std::size_t left_;
  Matching m_;
  std::vector<std::uint32_t> dist_;
  std::vector<std::size_t> next_edge_;
  std::vector<NodeIndex> queue_, stack_, via_;
};

}  // namespace

Matching maximum_matching(const Adjacency& left_to_right, std::size_t right_count) {
  return HopcroftKarp(left_to_right, right_count).run();
}

}  // namespace nimble::scheduler
