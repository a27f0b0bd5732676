// The engine's traces must pass the trace library's own validation (ids, deps and the
// recorder's optional fields), with no errors and no warnings.
#include "deps_test_util.hpp"
#include "nimble/trace/io.hpp"
#include "nimble/trace/validate.hpp"

namespace nimble::deps::testing {
namespace {

class TraceValidation : public ::testing::TestWithParam<StreamOrderPolicy> {};

TEST_P(TraceValidation, RecordedTraceValidatesCleanly) {
  Engine engine;
  engine.set_stream_order_policy(GetParam());
  engine.stream_created(0x10, 0, 0, 1);
  engine.stream_created(0x20, 0x1, 3, 1);
  engine.allocated(0x10000, 0x400, AllocKind::Device, kLegacyStream);
  engine.allocated(0x20000, 0x400, AllocKind::ModuleGlobal, kLegacyStream);
  engine.begin_window();
  engine.allocated(0x30000, 0x400, AllocKind::Async, 0x20);
  launch(engine, 0x10, {wr(0x10000, 0x400)}, 1, trace::TaskKind::Memcpy);
  engine.event_recorded(0xe, 0x10, 1);
  engine.stream_waited(0x20, 0xe, 1);
  launch(engine, 0x20, {rd(0x10000, 0x100), wr(0x30000, 0x400), rd(0x5000, 8)});
  launch(engine, kPerThreadStream, {everything()}, 2);
  launch(engine, kLegacyStream, {rw(0x20000, 0x10)});
  engine.freed(0x30000, 0x20);
  engine.host_synced_stream(0x20, 1, "cuStreamSynchronize");
  engine.host_synced_event(0xe, 1, "cuEventSynchronize");
  engine.host_synced_context(1, "cuCtxSynchronize");
  launch(engine, 0x10, {rd(0x10000, 0x400)});
  launch(engine, 0x10, {rd(0x30000, 0x400)});
  launch(engine, 0x10, {}, 1, trace::TaskKind::Graph);
  engine.end_window();

  const trace::Trace t = engine.build_trace();
  EXPECT_EQ(t.extra.at("dependency_policy"), stream_order_policy_name(GetParam()));
  const trace::Diagnostics diagnostics = trace::validate_trace(t);
  EXPECT_TRUE(diagnostics.items.empty()) << diagnostics.format("engine trace");

  // And it survives the text round trip.
  const auto reloaded = trace::parse_trace(trace::dump_trace(t));
  ASSERT_TRUE(reloaded.trace.has_value()) << reloaded.diagnostics.format("engine trace");
  ASSERT_EQ(reloaded.trace->tasks.size(), t.tasks.size());
  for (std::size_t i = 0; i < t.tasks.size(); ++i) {
    EXPECT_EQ(reloaded.trace->tasks[i].deps, t.tasks[i].deps);
    EXPECT_EQ(reloaded.trace->tasks[i].extra.at("dep_reasons"), t.tasks[i].extra.at("dep_reasons"));
  }
  EXPECT_EQ(reloaded.trace->extra.at("dependency_policy"), t.extra.at("dependency_policy"));
}

INSTANTIATE_TEST_SUITE_P(Policies, TraceValidation,
                         ::testing::Values(StreamOrderPolicy::Keep, StreamOrderPolicy::Memory),
                         [](const auto& info) {
                           return info.param == StreamOrderPolicy::Keep ? std::string("Keep") : std::string("Memory");
                         });

}  // namespace
}  // namespace nimble::deps::testing
