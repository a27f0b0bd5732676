#include "schedule_reachability.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>

namespace nimble::trace::detail {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
// Clock memory budget for waited-on tasks; the block width shrinks below 64 streams to fit.
constexpr std::size_t kClockBudgetBytes = std::size_t{64} << 20;

// The schedule in flat arrays: dense stream ids, valid waits in compressed form.
struct FlatSchedule {
  std::vector<std::uint32_t> stream;  // dense stream id, kNone if the task has no schedule
  std::vector<std::uint32_t> wait_offsets;
  std::vector<std::uint32_t> waits;   // indices of earlier scheduled tasks
  std::vector<std::uint32_t> position;  // 1-based position on its stream (clock entries hold these)
  std::vector<std::uint32_t> clock_slot;  // kNone unless some task waits on it
  std::size_t stream_count = 0;
  std::uint32_t longest_stream = 0;
  std::size_t waited_on_count = 0;
};

FlatSchedule flatten(const Trace& trace, const TaskIndex& index) {
  const std::size_t n = trace.tasks.size();
  FlatSchedule flat;
  flat.stream.assign(n, kNone);
  flat.clock_slot.assign(n, kNone);
  flat.position.assign(n, 0);
  std::vector<std::uint32_t> stream_length;
  flat.wait_offsets.reserve(n + 1);
  flat.wait_offsets.push_back(0);
  std::unordered_map<int, std::uint32_t> dense;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& schedule = trace.tasks[i].schedule;
    if (schedule) {
      const auto [it, added] = dense.emplace(schedule->stream, static_cast<std::uint32_t>(dense.size()));
      flat.stream[i] = it->second;
      if (added) stream_length.push_back(0);
      flat.position[i] = ++stream_length[it->second];
      flat.longest_stream = std::max(flat.longest_stream, flat.position[i]);
      for (const TaskId wait : schedule->waits) {
        const auto w = index.find(wait);
        if (!w || *w >= i || flat.stream[*w] == kNone) continue;
        flat.waits.push_back(static_cast<std::uint32_t>(*w));
        if (flat.clock_slot[*w] == kNone) flat.clock_slot[*w] = static_cast<std::uint32_t>(flat.waited_on_count++);
      }
    }
    flat.wait_offsets.push_back(static_cast<std::uint32_t>(flat.waits.size()));
  }
  flat.stream_count = dense.size();
  return flat;
}

struct Query {
  std::uint32_t task;
  std::uint32_t dep;
  std::uint32_t position;
  std::uint32_t lane;   // the dependency's stream, among the streams of this block
  std::uint32_t block;
};

// Settled without clocks: same stream, or one of the waits is on d's stream at or after d.
bool settled_locally(const FlatSchedule& flat, std::size_t t, std::size_t d) {
  if (flat.stream[t] == flat.stream[d]) return true;
  for (std::uint32_t e = flat.wait_offsets[t]; e < flat.wait_offsets[t + 1]; ++e) {
    const std::uint32_t w = flat.waits[e];
    if (flat.stream[w] == flat.stream[d] && w >= d) return true;
  }
  return false;
}

// One pass over the tasks for up to W target streams. A clock entry is the 1-based position of the
// latest task of that stream known to have finished (0: none). Entries of tasks before `first`
// cannot satisfy any query of the block, so those tasks are skipped.
template <typename Clock, std::size_t W>
void answer_block(const FlatSchedule& flat, const std::vector<std::uint32_t>& lane_of_stream,
                  std::uint32_t block, const Query* begin, const Query* end, std::vector<Clock>& stream_clocks,
                  std::vector<Clock>& waited_on_clocks, std::vector<UnorderedDependency>& unordered) {
  std::uint32_t first = kNone, last = 0;
  for (const Query* q = begin; q != end; ++q) {
    first = std::min(first, q->dep);
    last = std::max(last, q->task);
  }
  std::fill(stream_clocks.begin(), stream_clocks.end(), Clock{0});
  const Query* query = begin;
  for (std::uint32_t t = first; t <= last; ++t) {
    const std::uint32_t stream = flat.stream[t];
    if (stream == kNone) continue;
    Clock* clock = stream_clocks.data() + std::size_t{stream} * W;
    for (std::uint32_t e = flat.wait_offsets[t]; e < flat.wait_offsets[t + 1]; ++e) {
      const std::uint32_t w = flat.waits[e];
      if (w < first) continue;
      const Clock* other = waited_on_clocks.data() + std::size_t{flat.clock_slot[w]} * W;
      for (std::size_t k = 0; k < W; ++k) clock[k] = std::max(clock[k], other[k]);
    }
    for (; query != end && query->task == t; ++query) {
      if (static_cast<std::uint32_t>(clock[query->lane]) < flat.position[query->dep]) {
        unordered.push_back({query->task, query->dep, query->position});
      }
    }
    const std::uint32_t lane = lane_of_stream[stream];
    if (lane != kNone && lane / W == block) clock[lane % W] = static_cast<Clock>(flat.position[t]);
    if (flat.clock_slot[t] != kNone) {
      std::copy(clock, clock + W, waited_on_clocks.data() + std::size_t{flat.clock_slot[t]} * W);
    }
  }
}

template <typename Clock, std::size_t W>
void answer_queries(const FlatSchedule& flat, std::vector<Query>& queries, const std::vector<std::uint32_t>& lane_of_stream,
                    std::vector<UnorderedDependency>& unordered) {
  for (auto& q : queries) {
    const std::uint32_t lane = lane_of_stream[flat.stream[q.dep]];
    q.block = lane / W;
    q.lane = lane % W;
  }
  std::sort(queries.begin(), queries.end(), [](const Query& a, const Query& b) {
    return a.block != b.block ? a.block < b.block : a.task < b.task;
  });
  std::vector<Clock> stream_clocks(flat.stream_count * W);
  std::vector<Clock> waited_on_clocks(flat.waited_on_count * W);
  for (auto begin = queries.begin(); begin != queries.end();) {
    auto end = std::find_if(begin, queries.end(), [&](const Query& q) { return q.block != begin->block; });
    answer_block<Clock, W>(flat, lane_of_stream, begin->block, &*begin, &*begin + (end - begin), stream_clocks,
                           waited_on_clocks, unordered);
    begin = end;
  }
}

// Widest block that keeps the clocks of waited-on tasks within budget.
template <typename Clock>
void answer_queries(const FlatSchedule& flat, std::vector<Query>& queries, const std::vector<std::uint32_t>& lane_of_stream,
                    std::vector<UnorderedDependency>& unordered) {
  const std::size_t per_lane = std::max<std::size_t>(flat.waited_on_count, 1) * sizeof(Clock);
  const std::size_t fit = kClockBudgetBytes / per_lane;
  if (fit >= 64) answer_queries<Clock, 64>(flat, queries, lane_of_stream, unordered);
  else if (fit >= 32) answer_queries<Clock, 32>(flat, queries, lane_of_stream, unordered);
  else if (fit >= 16) answer_queries<Clock, 16>(flat, queries, lane_of_stream, unordered);
  else answer_queries<Clock, 8>(flat, queries, lane_of_stream, unordered);
}

}  // namespace

std::vector<UnorderedDependency> find_unordered_dependencies(const Trace& trace, const TaskIndex& index) {
  const FlatSchedule flat = flatten(trace, index);
  std::vector<Query> queries;
  std::vector<std::uint32_t> lane_of_stream(flat.stream_count, kNone);
  std::uint32_t lanes = 0;
  for (std::size_t t = 0; t < trace.tasks.size(); ++t) {
    if (flat.stream[t] == kNone) continue;
    const auto& deps = trace.tasks[t].deps;
    for (std::size_t k = 0; k < deps.size(); ++k) {
      const auto d = index.find(deps[k]);
      if (!d || *d >= t || flat.stream[*d] == kNone || settled_locally(flat, t, *d)) continue;
      std::uint32_t& lane = lane_of_stream[flat.stream[*d]];
      if (lane == kNone) lane = lanes++;
      queries.push_back({static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(*d), static_cast<std::uint32_t>(k), 0, 0});
    }
  }
  std::vector<UnorderedDependency> unordered;
  if (queries.empty()) return unordered;

  // 16-bit clocks halve the memory traffic (and SSE2 has a 16-bit signed max) when streams are short.
  if (flat.longest_stream <= static_cast<std::uint32_t>(std::numeric_limits<std::int16_t>::max())) {
    answer_queries<std::int16_t>(flat, queries, lane_of_stream, unordered);
  } else {
    answer_queries<std::int32_t>(flat, queries, lane_of_stream, unordered);
  }

  std::sort(unordered.begin(), unordered.end(), [](const UnorderedDependency& a, const UnorderedDependency& b) {
    return a.task != b.task ? a.task < b.task : a.position < b.position;
  });
  return unordered;
}

}  // namespace nimble::trace::detail
