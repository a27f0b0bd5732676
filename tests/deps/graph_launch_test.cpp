// Program graph launches whose nodes are recorded: graph edges, the launch stream's earlier work,
// memory conflicts around the graph and the launch task that stands for all nodes afterwards.
#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr StreamHandle kS = 0x100;
constexpr StreamHandle kT = 0x200;
constexpr EventHandle kE = 0x300;

GraphNodeEvent node(std::vector<std::size_t> preds, std::vector<MemAccess> accesses, trace::TaskKind kind = trace::TaskKind::Kernel) {
  GraphNodeEvent n;
  n.task.kind = std::move(kind);
  n.task.accesses = std::move(accesses);
  n.preds = std::move(preds);
  return n;
}

trace::TaskId graph(Engine& engine, StreamHandle stream, std::vector<GraphNodeEvent> nodes) {
  TaskEvent ev;
  ev.kind = trace::TaskKind::GraphLaunch;
  ev.stream = stream;
  ev.graph_nodes = std::move(nodes);
  return engine.task(std::move(ev));
}

class GraphLaunch : public ::testing::TestWithParam<StreamOrderPolicy> {
 protected:
  void SetUp() override {
    engine.set_stream_order_policy(GetParam());
    engine.stream_created(kS, 0, 0, 0);
    engine.stream_created(kT, 0, 0, 0);
    engine.begin_window();
  }
  Engine engine;
};

TEST_P(GraphLaunch, NodesFollowGraphEdgesAndTheStreamsEarlierWork) {
  const auto before = launch(engine, kS, {wr(0x1000, 64)});
  // A diamond: 0 -> {1, 2} -> 3, on memory apart from `before`'s.
  const auto l = graph(engine, kS,
                       {node({}, {wr(0x2000, 64)}), node({0}, {rd(0x2000, 64), wr(0x3000, 64)}),
                        node({0}, {rd(0x2000, 64), wr(0x4000, 64)}), node({1, 2}, {rd(0x3000, 64), rd(0x4000, 64)})});
  const auto after = launch(engine, kS, {rd(0x5000, 64)});
  const trace::Trace t = engine.build_trace();
  expect_well_formed(t);
  ASSERT_EQ(t.tasks.size(), 7u);
  EXPECT_EQ(l, 5);
  EXPECT_EQ(deps_of(t, 1), Ids{before});
  EXPECT_EQ(reason(t, 1, before), "stream");
  EXPECT_EQ(deps_of(t, 2), Ids{1});
  EXPECT_EQ(reason(t, 2, 1).rfind("graph", 0), 0u) << reason(t, 2, 1);
  EXPECT_EQ(deps_of(t, 3), Ids{1});  // nodes 1 and 2 are not ordered with each other
  EXPECT_EQ(deps_of(t, 4), (Ids{2, 3}));
  EXPECT_EQ(reason(t, 4, 2).rfind("graph", 0), 0u) << reason(t, 4, 2);
  EXPECT_EQ(task_of(t, 5).kind, "graph_launch");
  EXPECT_EQ(deps_of(t, 5), (Ids{1, 2, 3, 4}));
  EXPECT_EQ(task_of(t, 5).extra.at("graph_nodes"), 4);
  EXPECT_EQ(task_of(t, 3).extra.at("graph_launch"), 5);
  EXPECT_EQ(task_of(t, 3).extra.at("graph_node"), 2);
  EXPECT_EQ(task_of(t, 3).stream, task_of(t, 0).stream);
  // Work after the launch on its stream follows the launch task, which stands for every node.
  EXPECT_EQ(deps_of(t, after), Ids{l});
}

TEST_P(GraphLaunch, MemoryConflictsReachIntoAndOutOfTheGraph) {
  const auto writer = launch(engine, kT, {wr(0x1000, 64)});
  const auto l = graph(engine, kS, {node({}, {rd(0x1000, 64)}), node({}, {wr(0x2000, 64)})});
  const auto reader = launch(engine, kT, {rd(0x2000, 64)});
  const trace::Trace t = engine.build_trace();
  expect_well_formed(t);
  EXPECT_EQ(deps_of(t, 1), Ids{writer});  // RAW on another stream
  EXPECT_EQ(deps_of(t, 2), Ids{});
  EXPECT_EQ(deps_of(t, l), (Ids{1, 2}));
  // RAW on the node that wrote, not the launch (and stream order with `writer` unless relaxed).
  const Ids expected = GetParam() == StreamOrderPolicy::Keep ? Ids{writer, 2} : Ids{2};
  EXPECT_EQ(deps_of(t, reader), expected);
}

TEST_P(GraphLaunch, EventsInsideTheGraphOrderOtherStreams) {
  const auto other = launch(engine, kT, {wr(0x9000, 64)});
  engine.event_recorded(kE, kT, 0);
  GraphNodeEvent wait = node({}, {}, trace::TaskKind::EventWait);
  wait.waits = {kE};
  GraphNodeEvent record = node({0}, {}, trace::TaskKind::EventRecord);
  record.records = {kE + 1};
  const auto l = graph(engine, kS, {wait, record});
  engine.stream_waited(kT, kE + 1, 0);
  const auto next = launch(engine, kT, {wr(0xa000, 64)});
  const trace::Trace t = engine.build_trace();
  expect_well_formed(t);
  EXPECT_EQ(deps_of(t, 1), Ids{other});  // the wait node: after the event's work
  const Ids expected = GetParam() == StreamOrderPolicy::Keep ? Ids{other, l} : Ids{l};
  EXPECT_EQ(deps_of(t, next), expected);
  EXPECT_EQ(reason(t, next, l), "event");
}

TEST_P(GraphLaunch, AnEmptyGraphStillOrdersItsStream) {
  const auto before = launch(engine, kS, {wr(0x1000, 64)});
  const auto l = graph(engine, kS, {});
  const auto after = launch(engine, kS, {wr(0x2000, 64)}, 0, trace::TaskKind::HostFunc);
  const trace::Trace t = engine.build_trace();
  expect_well_formed(t);
  EXPECT_EQ(deps_of(t, l), Ids{before});
  EXPECT_EQ(deps_of(t, after), Ids{l});
}

TEST_P(GraphLaunch, ANodeThatFollowsALaterNodeIsRefused) {
  EXPECT_THROW(graph(engine, kS, {node({1}, {}), node({}, {})}), std::logic_error);
}

INSTANTIATE_TEST_SUITE_P(Policies, GraphLaunch,
                         ::testing::Values(StreamOrderPolicy::Keep, StreamOrderPolicy::Memory),
                         [](const auto& info) { return std::string(stream_order_policy_name(info.param)) == "memory" ? "Memory" : "StreamOrder"; });

}  // namespace
}  // namespace nimble::deps::testing
