// Properties every produced schedule must have, checked against brute-force closures on thousands
// of random DAGs and several option sets.
#include <gtest/gtest.h>

#include <numeric>

#include "nimble/scheduler/schedule.hpp"
#include "nimble/scheduler/synthetic.hpp"
#include "oracle.hpp"

namespace nimble::scheduler {
namespace {

using testing::Closure;
using testing::floyd_warshall;

// Dilworth: the largest antichain equals n minus a maximum matching of the closure.
std::size_t width_by_oracle(const Closure& reach) {
  std::vector<std::vector<NodeIndex>> adj(reach.size());
  for (NodeIndex u = 0; u < reach.size(); ++u) {
    for (NodeIndex v = 0; v < reach.size(); ++v) {
      if (reach[u][v]) adj[u].push_back(v);
    }
  }
  return reach.size() - testing::kuhn_matching_size(adj, reach.size());
}

void check_schedule(const Dag& dag, const Options& options, const ScheduleResult& result) {
  const std::size_t n = dag.size();
  const auto& a = result.schedule.assignment;
  const auto& waits = result.schedule.waits;
  const Stats& s = result.stats;
  const Closure dag_reach = floyd_warshall(dag.predecessors);
  const Closure sync_reach = floyd_warshall(testing::sync_graph(a, waits));

  ASSERT_EQ(a.stream_of.size(), n);
  ASSERT_EQ(waits.size(), n);
  std::uint32_t next_new_stream = 0;  // streams are numbered by their first task
  for (NodeIndex v = 0; v < n; ++v) {
    ASSERT_LT(a.stream_of[v], a.streams);
    if (a.stream_of[v] == next_new_stream) ++next_new_stream;
    ASSERT_LT(a.stream_of[v], next_new_stream) << "stream numbering not by first task at node " << v;
  }
  EXPECT_EQ(next_new_stream, a.streams);

  const auto stream_prev = stream_predecessors(a);
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex u : dag.predecessors[v]) EXPECT_TRUE(sync_reach[u][v]) << "dependency " << u << "->" << v << " not enforced";
    EXPECT_TRUE(std::is_sorted(waits[v].begin(), waits[v].end()));
    for (NodeIndex u : waits[v]) {
      EXPECT_TRUE(dag_reach[u][v]) << "node " << v << " waits on " << u << ", not an ancestor";
      EXPECT_NE(a.stream_of[u], a.stream_of[v]) << "wait within one stream at node " << v;
      // Pruned: no other path of the schedule already orders u before v.
      const NodeIndex prev = stream_prev[v];
      bool implied = prev != kNoNode && (prev == u || sync_reach[u][prev]);
      for (NodeIndex w : waits[v]) implied |= w != u && sync_reach[u][w];
      EXPECT_FALSE(implied) << "wait " << u << "->" << v << " is implied by others";
    }
  }

  const bool limited = options.max_streams != 0 && s.width_upper_bound > options.max_streams;
  if (!limited) {  // no lost concurrency: tasks sharing a stream are ordered by the DAG anyway
    for (NodeIndex v = 0; v < n; ++v) {
      const NodeIndex prev = stream_prev[v];
      if (prev != kNoNode) { EXPECT_TRUE(dag_reach[prev][v]) << prev << " and " << v << " share a stream"; }
    }
    EXPECT_DOUBLE_EQ(s.makespan_us, s.critical_path_us);
  }
  if (options.max_streams != 0) { EXPECT_LE(s.streams, options.max_streams); }

  // Counts against the oracles.
  const auto meg = testing::reduction_by_closure(dag, dag_reach);
  std::vector<std::vector<NodeIndex>> meg_successors(n);
  for (auto [u, v] : meg) meg_successors[u].push_back(v);
  std::size_t distinct_edges = 0;
  for (NodeIndex v = 0; v < n; ++v) {
    std::vector<NodeIndex> p = dag.predecessors[v];
    std::sort(p.begin(), p.end());
    distinct_edges += static_cast<std::size_t>(std::unique(p.begin(), p.end()) - p.begin());
  }
  EXPECT_EQ(s.tasks, n);
  EXPECT_EQ(s.edges, distinct_edges);
  EXPECT_EQ(s.meg_edges, meg.size());
  EXPECT_EQ(s.matching, testing::kuhn_matching_size(meg_successors, n));
  EXPECT_EQ(s.chains, n - s.matching);
  EXPECT_EQ(s.streams, a.streams);
  EXPECT_LE(s.width_upper_bound, s.chains);
  EXPECT_EQ(s.waits, count_waits(waits));
  EXPECT_LE(s.waits, s.waits_before_pruning);
  if (!options.merge_chains && options.max_streams == 0) {
    // The paper's bound: one wait per unmatched MEG edge, and none of them is implied.
    EXPECT_EQ(s.waits_before_pruning, s.meg_edges - s.matching);
    EXPECT_EQ(s.waits, s.waits_before_pruning);
    EXPECT_EQ(s.streams, s.chains);
  }
  const std::size_t width = width_by_oracle(dag_reach);
  EXPECT_LE(s.width_lower_bound, width);
  EXPECT_GE(s.width_upper_bound, width);

  const auto durations = durations_or_default(dag);
  EXPECT_DOUBLE_EQ(s.serial_us, std::accumulate(durations.begin(), durations.end(), 0.0));
  EXPECT_LE(s.critical_path_us, s.makespan_us);
  EXPECT_LE(s.makespan_us, s.serial_us);
  ASSERT_EQ(result.schedule.stream_priorities.size(), a.streams);
  for (int p : result.schedule.stream_priorities) {
    EXPECT_GE(p, 0);
    EXPECT_LT(p, std::max(1, options.priority_levels));
  }
}

TEST(Schedule, RandomDagsGetSoundMinimalSchedulesUnderAllOptions) {
  std::mt19937_64 rng(4);
  const double densities[] = {0.03, 0.08, 0.15, 0.3, 0.6};
  const Options option_sets[] = {
      {},                                                    // defaults: merge, unlimited
      {.merge_chains = false},                               // the paper's first step
      {.merge_candidates = 1},                               // heavily capped merging
      {.max_streams = 1},
      {.max_streams = 2, .merge_candidates = 0},
      {.max_streams = 3, .priority_levels = 4},
  };
  for (int i = 0; i < 2400 && !HasFailure(); ++i) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(0, 40)(rng);
    const Dag dag = testing::random_dag(n, densities[i % std::size(densities)], rng);
    const Options& options = option_sets[(i / std::size(densities)) % std::size(option_sets)];
    SCOPED_TRACE("dag " + std::to_string(i) + ", n " + std::to_string(n) + ", max_streams " +
                 std::to_string(options.max_streams) + ", merge " + std::to_string(options.merge_chains));
    check_schedule(dag, options, schedule_dag(dag, options));
  }
}

TEST(Schedule, OneStreamRunsEverythingSerially) {
  std::mt19937_64 rng(5);
  const Dag dag = testing::random_dag(30, 0.1, rng);
  const auto result = schedule_dag(dag, {.max_streams = 1});
  EXPECT_EQ(result.stats.streams, std::min<std::size_t>(1, dag.size()));
  EXPECT_EQ(result.stats.waits, 0u);
  EXPECT_DOUBLE_EQ(result.stats.makespan_us, result.stats.serial_us);
}

TEST(Schedule, MissingDurationsCountAsOneMicrosecondAndAreReported) {
  Dag dag{.predecessors = {{}, {0}, {0}}, .durations_us = {4.0, std::nullopt, std::nullopt}};
  const auto stats = schedule_dag(dag).stats;
  EXPECT_EQ(stats.tasks_without_duration, 2u);
  EXPECT_DOUBLE_EQ(stats.serial_us, 4.0 + 2 * kDefaultDurationUs);
  EXPECT_DOUBLE_EQ(stats.critical_path_us, 4.0 + kDefaultDurationUs);
  EXPECT_EQ(schedule_dag(Dag{.predecessors = {{}, {}}}).stats.tasks_without_duration, 2u);
}

TEST(Schedule, RejectsANonTopologicalOrderNamingTheNode) {
  Dag dag{.predecessors = {{}, {2}, {}}};
  try {
    schedule_dag(dag);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("node 1"), std::string::npos) << e.what();
  }
}

// Reach sets as bitsets, one row per node: fine for a few thousand nodes.
std::vector<std::vector<std::uint64_t>> ancestors(const std::vector<std::vector<NodeIndex>>& preds) {
  const std::size_t words = (preds.size() + 63) / 64;
  std::vector<std::vector<std::uint64_t>> rows(preds.size(), std::vector<std::uint64_t>(words, 0));
  for (NodeIndex v = 0; v < preds.size(); ++v) {
    for (NodeIndex u : preds[v]) {
      for (std::size_t w = 0; w < words; ++w) rows[v][w] |= rows[u][w];
      rows[v][u / 64] |= std::uint64_t{1} << (u % 64);
    }
  }
  return rows;
}

// Too large for the cubic oracles: bitset closures check the main guarantees on a real shape.
TEST(Schedule, NetworkShapedDagIsSoundAtScale) {
  const Dag dag = make_network_dag(4000, 7);
  const auto dag_anc = ancestors(dag.predecessors);
  auto is_ancestor = [](const auto& rows, NodeIndex u, NodeIndex v) { return (rows[v][u / 64] >> (u % 64)) & 1; };
  for (std::uint32_t max_streams : {0u, 8u}) {
    SCOPED_TRACE("max_streams " + std::to_string(max_streams));
    const auto result = schedule_dag(dag, {.max_streams = max_streams});
    const auto& a = result.schedule.assignment;
    const auto sync_anc = ancestors(testing::sync_graph(a, result.schedule.waits));
    const auto prev = stream_predecessors(a);
    std::size_t unenforced = 0, unordered = 0, foreign_waits = 0;
    for (NodeIndex v = 0; v < dag.size(); ++v) {
      for (NodeIndex u : dag.predecessors[v]) unenforced += !is_ancestor(sync_anc, u, v);
      for (NodeIndex u : result.schedule.waits[v]) foreign_waits += !is_ancestor(dag_anc, u, v);
      if (max_streams == 0 && prev[v] != kNoNode) unordered += !is_ancestor(dag_anc, prev[v], v);
    }
    EXPECT_EQ(unenforced, 0u);
    EXPECT_EQ(unordered, 0u);
    EXPECT_EQ(foreign_waits, 0u);
    if (max_streams) { EXPECT_LE(result.stats.streams, max_streams); }
    else { EXPECT_DOUBLE_EQ(result.stats.makespan_us, result.stats.critical_path_us); }
  }
}

}  // namespace
}  // namespace nimble::scheduler
