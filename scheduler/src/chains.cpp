#include "nimble/scheduler/chains.hpp"

namespace nimble::scheduler {

ChainCover chains_from_matching(const Matching& matching) {
  const std::size_t n = matching.right_of_left.size();
  ChainCover cover;
  cover.chain_of.assign(n, 0);
  // A chain starts at each node nothing precedes; visiting heads in index order sorts the chains.
  for (NodeIndex head = 0; head < n; ++head) {
    if (matching.left_of_right[head] != kNoNode) continue;
    const auto id = static_cast<std::uint32_t>(cover.chains.size());
    auto& chain = cover.chains.emplace_back();
    for (NodeIndex v = head; v != kNoNode; v = matching.right_of_left[v]) {
      chain.push_back(v);
      cover.chain_of[v] = id;
    }
  }
  return cover;
}

StreamAssignment one_stream_per_chain(const ChainCover& cover) {
  return {cover.chain_of, static_cast<std::uint32_t>(cover.chains.size())};
}

void renumber_streams(StreamAssignment& assignment) {
  std::vector<std::uint32_t> new_id;
  std::uint32_t next = 0;
  for (auto& s : assignment.stream_of) {
    if (s >= new_id.size()) new_id.resize(s + 1, kNoNode);
    if (new_id[s] == kNoNode) new_id[s] = next++;
    s = new_id[s];
  }
  assignment.streams = next;
}

std::vector<NodeIndex> stream_predecessors(const StreamAssignment& assignment) {
  std::vector<NodeIndex> last(assignment.streams, kNoNode);
  std::vector<NodeIndex> prev(assignment.stream_of.size(), kNoNode);
  for (NodeIndex v = 0; v < prev.size(); ++v) {
    prev[v] = last[assignment.stream_of[v]];
    last[assignment.stream_of[v]] = v;
  }
  return prev;
}

}  // namespace nimble::scheduler
