// build_plan refuses what it cannot replay safely: every problem names its task, and there is no
// plan. Also the bundled Inception example, as it really is.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/io.hpp"
#include "nimble/trace/recorded.hpp"
#include "test_util.hpp"

namespace nimble::replayer {
namespace {

using test::document;
using test::joined;
using test::kernel;
using test::parse;
using test::plan_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Builds the plan and expects exactly `count` problems, all naming `task` and its kind.
std::vector<std::string> problems_for(const trace::Trace& trace, const std::string& task, std::size_t count = 1) {
  const PlanResult r = plan_of(trace);
  EXPECT_FALSE(r.plan);
  EXPECT_EQ(r.problems.size(), count) << joined(r);
  for (const std::string& p : r.problems) EXPECT_TRUE(contains(p, task)) << "does not name " << task << ": " << p;
  return r.problems;
}

const char* const kAllocations = R"("allocations": [
    {"id": 0, "addr": "0x7f0000000000", "size": 4096, "kind": "device"},
    {"id": 1, "addr": "0x7f0000100000", "size": 2048, "kind": "async", "freed": true, "freed_before_task": 3}])";

TEST(PlanProblems, LibraryCallFieldsAreReadAndABadKeyNamesItsTask) {
  const PlanResult r = plan_of(parse(document(
      kernel(0, "[]", R"("library_call": "cudnnBackendExecute", "library_call_id": 3, "library_key": "0xfeed")") + ", " +
      kernel(1, "[0]"))));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->ops[0].library_call, 3);
  EXPECT_EQ(r.plan->ops[0].library_symbol, "cudnnBackendExecute");
  EXPECT_EQ(r.plan->ops[0].library_key, 0xfeedu);
  EXPECT_EQ(r.plan->ops[1].library_call, -1);
  EXPECT_FALSE(r.plan->ops[1].library_key);
  const auto p = problems_for(parse(document(kernel(0, "[]", R"("library_call_id": 3, "library_key": "feed")"))),
                              "task 0 (kernel)");
  EXPECT_TRUE(contains(p[0], "library_key")) << p[0];
}

TEST(PlanProblems, GraphTaskIsOpaque) {
  const auto p = problems_for(
      parse(document(kernel(0, "[]") + R"(, {"id": 5, "kind": "graph", "deps": [0], "graph_exec": "0x55aa00",
                                           "mem": [{"everything": true, "mode": "rw"}]})")),
      "task 5 (graph)");
  // One problem for the task, not a second one for its "everything" memory.
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(contains(p[0], "opaque")) << p[0];
}

// Host functions and the tasks around a program graph's nodes keep their place and do nothing.
TEST(PlanProblems, TasksThatOnlyOrderOthersAreReplayedAsNothing) {
  const PlanResult r = plan_of(parse(document(R"({"id": 12, "kind": "host_func", "deps": []}, )" + kernel(13, "[12]") +
                                              R"(, {"id": 14, "kind": "event_record", "deps": [13]},
                                                 {"id": 15, "kind": "graph_launch", "deps": [13, 14], "graph_nodes": 2})")));
  ASSERT_TRUE(r.plan) << joined(r);
  ASSERT_EQ(r.plan->ops.size(), 4u);
  EXPECT_EQ(r.plan->ops[0].kind, OpKind::Nop);
  EXPECT_EQ(r.plan->ops[1].kind, OpKind::Kernel);
  EXPECT_EQ(r.plan->ops[2].kind, OpKind::Nop);
  EXPECT_EQ(r.plan->ops[3].kind, OpKind::Nop);
  EXPECT_EQ(r.plan->ops[1].deps, std::vector<std::size_t>{0});  // the order stays
  EXPECT_EQ(r.plan->host_functions, 1u);
}

// For nimble run the program launches its own graphs: a node's fields are not read (this one's
// arguments are unknown: a replayed plan refuses it), and the launch needs its executable.
TEST(PlanProblems, TheProgramsGraphsRunByItselfNeedOnlyTheirExecutable) {
  const std::string node = R"({"id": 3, "kind": "kernel", "deps": [], "function": "0x1000", "graph_launch": 4, "graph_node": 0,
      "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]}, "args": {"known": false}, "mem": [{"everything": true, "mode": "rw"}]})";
  const std::string launch = R"(, {"id": 4, "kind": "graph_launch", "deps": [3], "graph_nodes": 1, "graph_exec": "0x7a00"})";
  EXPECT_FALSE(plan_of(parse(document(node + launch))).plan);
  const PlanResult run = build_plan(parse(document(node + launch)), ProgramGraphs::RunByProgram);
  ASSERT_TRUE(run.plan) << joined(run);
  EXPECT_EQ(run.plan->ops[0].kind, OpKind::Nop);
  EXPECT_EQ(run.plan->ops[1].kind, OpKind::Graph);
  EXPECT_EQ(run.plan->ops[1].graph_exec, 0x7a00u);
  const PlanResult no_exec = build_plan(
      parse(document(node + R"(, {"id": 4, "kind": "graph_launch", "deps": [3], "graph_nodes": 1})")), ProgramGraphs::RunByProgram);
  ASSERT_FALSE(no_exec.plan);
  EXPECT_TRUE(contains(joined(no_exec), "task 4 (graph_launch)")) << joined(no_exec);
  EXPECT_TRUE(contains(joined(no_exec), "graph_exec")) << joined(no_exec);
}

TEST(PlanProblems, UnknownKernelArguments) {
  // As the recorder writes it: no bytes, and memory nimble cannot see.
  const auto p = problems_for(parse(document(R"({"id": 3, "kind": "kernel", "deps": [], "function": "0x1000",
      "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]}, "args": {"known": false},
      "mem": [{"everything": true, "mode": "rw"}]})")),
                              "task 3 (kernel)", 2);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_TRUE(std::any_of(p.begin(), p.end(), [](auto& s) { return contains(s, "args.known is false"); })) << p[0];
  EXPECT_TRUE(std::any_of(p.begin(), p.end(), [](auto& s) { return contains(s, "mem: everything"); })) << p[0];
}

// A recording made in memory is planned without being validated first: a parameter or pointer past
// the argument bytes (what an `extra` buffer shorter than the kernel's layout once gave) is refused,
// never read or written past the bytes.
TEST(PlanProblems, AParameterOrPointerPastTheArgumentBytesIsRefused) {
  trace::Trace t = parse(document(kernel(0, "[]")));
  auto record = std::make_shared<trace::KernelRecord>(trace::read_kernel(t.tasks[0]));
  record->args.params = {{0, 4096}};
  record->args.pointers = {{3264, 0, 0}};
  t.tasks[0].kernel = record;
  const auto p = problems_for(t, "task 0 (kernel)", 1);
  EXPECT_TRUE(contains(p.at(0), "a parameter ends at byte 4096 but args.bytes holds 8 bytes")) << p.at(0);
  record->args.params = {{0, 8}};
  const auto q = problems_for(t, "task 0 (kernel)", 1);
  EXPECT_TRUE(contains(q.at(0), "a pointer ends at byte 3272 but args.bytes holds 8 bytes")) << q.at(0);
}

TEST(PlanProblems, UnknownKernelArgumentsAlone) {
  const auto p = problems_for(parse(document(R"({"id": 4, "kind": "kernel", "deps": [], "function": "0x1000",
      "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]}, "args": {"known": false}})")),
                              "task 4 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "args.known")) << p.at(0);
}

TEST(PlanProblems, EverythingMemoryOnAnOtherwiseReplayableTask) {
  const auto p = problems_for(parse(document(kernel(0, "[]") + ", " +
                                             kernel(21, "[0]", R"("mem": [{"everything": true, "mode": "r"}])"))),
                              "task 21 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "everything")) << p.at(0);
}

TEST(PlanProblems, FreedAllocationReachedOtherThanThroughAPointerArgument) {
  // The kernel touches allocation 1, freed during the iteration, but no argument points into it
  // (a TMA descriptor, a pointer stored in device memory): replay cannot redirect it.
  const auto p = problems_for(
      parse(document(kernel(0, "[]", R"("mem": [{"alloc": 0, "offset": 0, "size": 4096, "mode": "r"}])") + ", " +
                         kernel(8, "[0]", R"("mem": [{"alloc": 1, "offset": 0, "size": 2048, "mode": "rw"}])"),
                     kAllocations)),
      "task 8 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "allocation 1")) << p.at(0);
  EXPECT_TRUE(contains(p.at(0), "freed")) << p.at(0);
}

TEST(PlanProblems, FreedAllocationThroughAPointerArgumentIsFine) {
  // The same kernel with a pointer argument into allocation 1: redirected, no problem.
  const PlanResult r = plan_of(parse(document(R"({"id": 8, "kind": "kernel", "deps": [], "function": "0x1000",
      "launch": {"grid": [1, 1, 1], "block": [1, 1, 1]},
      "args": {"bytes": "00001000007f0000", "params": [{"offset": 0, "size": 8}],
               "pointers": [{"offset": 0, "alloc": 1, "alloc_offset": 0}]},
      "mem": [{"alloc": 1, "offset": 0, "size": 2048, "mode": "rw"}]})",
                                              kAllocations)));
  ASSERT_TRUE(r.plan) << joined(r);
  EXPECT_EQ(r.plan->ops[0].kernel.pointer_fixes.size(), 1u);
}

TEST(PlanProblems, MemNamesAnAllocationThatIsNotListed) {
  // Without a top-level "allocations" the validator cannot check the reference; build_plan does.
  const auto p = problems_for(parse(document(kernel(6, "[]", R"("mem": [{"alloc": 9, "offset": 0, "size": 8, "mode": "w"}])"))),
                              "task 6 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "allocation 9")) << p.at(0);
}

TEST(PlanProblems, TwoDimensionalCopy) {
  const auto p = problems_for(parse(document(R"({"id": 2, "kind": "memcpy", "deps": [],
      "copy": {"direction": "DtoD", "src": "0x7f0000000000", "dst": "0x7f0000100000", "bytes": 4096,
               "shape": {"width_bytes": 256, "height": 16, "src_pitch": 512, "dst_pitch": 256}}})")),
                              "task 2 (memcpy)");
  EXPECT_TRUE(contains(p.at(0), "2D/3D")) << p.at(0);
}

TEST(PlanProblems, ArrayCopyDirection) {
  const auto p = problems_for(parse(document(R"({"id": 2, "kind": "memcpy", "deps": [],
      "copy": {"direction": "AtoD", "src": "0x1234", "dst": "0x7f0000100000", "bytes": 4096}})")),
                              "task 2 (memcpy)");
  EXPECT_TRUE(contains(p.at(0), "\"AtoD\"")) << p.at(0);
}

TEST(PlanProblems, BadHexInArgumentBytes) {
  // The validator refuses such a trace; a trace built or edited in memory reaches build_plan.
  trace::Trace trace = parse(document(kernel(0, "[]") + ", " + kernel(17, "[0]")));
  trace.tasks[1].extra["args"]["bytes"] = "01zz0000";
  auto p = problems_for(trace, "task 17 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "args.bytes")) << p.at(0);
  EXPECT_TRUE(contains(p.at(0), "\"zz\" at byte 1 is not hex")) << p.at(0);

  trace.tasks[1].extra["args"]["bytes"] = "abc";
  p = problems_for(trace, "task 17 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "odd number of hex digits")) << p.at(0);

  // A sign or space that std::stoul would accept is not hex either.
  trace.tasks[1].extra["args"]["bytes"] = "+1";
  p = problems_for(trace, "task 17 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "not hex")) << p.at(0);
}

TEST(PlanProblems, BadHexInLaunchAttributeValue) {
  trace::Trace trace = parse(document(kernel(0, "[]")));
  trace.tasks[0].extra["launch"]["attributes"] = trace::json::parse(R"([{"id": 5, "value": "0g"}])");
  const auto p = problems_for(trace, "task 0 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "attribute value")) << p.at(0);
}

TEST(PlanProblems, ParameterOutsideTheArgumentBytes) {
  trace::Trace trace = parse(document(kernel(33, "[]")));  // 8 argument bytes
  trace.tasks[0].extra["args"]["params"] = trace::json::parse(R"([{"offset": 0, "size": 4}, {"offset": 4, "size": 8}])");
  const auto p = problems_for(trace, "task 33 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "args.params")) << p.at(0);
  EXPECT_TRUE(contains(p.at(0), "offset 4 of size 8 lies outside the 8 argument bytes")) << p.at(0);
  // Ending exactly at the end is inside.
  trace.tasks[0].extra["args"]["params"] = trace::json::parse(R"([{"offset": 4, "size": 4}])");
  const PlanResult ok = plan_of(trace);
  ASSERT_TRUE(ok.plan) << joined(ok);
  EXPECT_EQ(ok.plan->ops[0].kernel.param_offsets, std::vector<std::uint32_t>{4});
}

TEST(PlanProblems, MissingFunctionField) {
  trace::Trace trace = parse(document(kernel(0, "[]") + ", " + kernel(41, "[0]")));
  trace.tasks[1].extra.erase("function");
  const auto p = problems_for(trace, "task 41 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "missing field \"function\"")) << p.at(0);
}

TEST(PlanProblems, FunctionThatIsNotAHexAddress) {
  trace::Trace trace = parse(document(kernel(2, "[]")));
  trace.tasks[0].extra["function"] = "4096";
  const auto p = problems_for(trace, "task 2 (kernel)");
  EXPECT_TRUE(contains(p.at(0), "\"4096\" is not a hex address")) << p.at(0);
}

TEST(PlanProblems, MissingLaunchOrArgs) {
  trace::Trace trace = parse(document(kernel(1, "[]") + ", " + kernel(2, "[]")));
  trace.tasks[0].extra.erase("launch");
  trace.tasks[1].extra.erase("args");
  const PlanResult r = plan_of(trace);
  EXPECT_FALSE(r.plan);
  ASSERT_EQ(r.problems.size(), 2u) << joined(r);
  EXPECT_TRUE(contains(r.problems[0], "task 1 (kernel)") && contains(r.problems[0], "\"launch\"")) << r.problems[0];
  EXPECT_TRUE(contains(r.problems[1], "task 2 (kernel)") && contains(r.problems[1], "\"args\"")) << r.problems[1];
}

TEST(PlanProblems, EveryBadTaskIsListedOnceAndGoodOnesNotAtAll) {
  trace::Trace trace = parse(document(
      kernel(100, "[]") + R"(,
      {"id": 101, "kind": "graph", "deps": [100]},
      {"id": 102, "kind": "memcpy", "deps": [], "copy": {"direction": "DtoD", "src": "0x7f0000000000", "dst": "0x7f0000100000", "bytes": 64,
                                                          "shape": {"width_bytes": 8, "height": 8}}},
      {"id": 103, "kind": "memset", "deps": [], "memset": {"dst": "0x7f0000000000", "value": 0, "element_size": 4, "bytes": 64}},
      {"id": 104, "kind": "host_func", "deps": [103]},
      )" + kernel(105, "[]")));
  trace.tasks[5].extra.erase("function");
  const PlanResult r = plan_of(trace);
  EXPECT_FALSE(r.plan);
  ASSERT_EQ(r.problems.size(), 3u) << joined(r);
  EXPECT_TRUE(contains(r.problems[0], "task 101 (graph)")) << r.problems[0];
  EXPECT_TRUE(contains(r.problems[1], "task 102 (memcpy)")) << r.problems[1];
  EXPECT_TRUE(contains(r.problems[2], "task 105 (kernel)")) << r.problems[2];
  EXPECT_FALSE(contains(joined(r), "task 100 ")) << joined(r);
  EXPECT_FALSE(contains(joined(r), "task 103 ")) << joined(r);
  EXPECT_FALSE(contains(joined(r), "task 104 ")) << joined(r);  // a host function only orders
}

TEST(PlanProblems, BadAllocationAddress) {
  trace::Trace trace = parse(document(kernel(0, "[]"), kAllocations));
  trace.extra["allocations"][1]["addr"] = "0x7f00zz";
  const PlanResult r = plan_of(trace);
  EXPECT_FALSE(r.plan);
  ASSERT_EQ(r.problems.size(), 1u) << joined(r);
  EXPECT_TRUE(contains(r.problems[0], "allocation 1")) << r.problems[0];
}

TEST(PlanProblems, AllocationFieldsOfTheWrongTypeAreProblemsNotExceptions) {
  // The validator only warns about these, so such a trace loads.
  trace::Trace trace = parse(document(kernel(0, "[]"), kAllocations));
  trace.extra["allocations"][1]["freed"] = 1;
  PlanResult r;
  ASSERT_NO_THROW(r = plan_of(trace));
  EXPECT_FALSE(r.plan);
  ASSERT_EQ(r.problems.size(), 1u) << joined(r);
  EXPECT_TRUE(contains(r.problems[0], "allocation 1") && contains(r.problems[0], "\"freed\"")) << r.problems[0];

  trace = parse(document(kernel(0, "[]"), kAllocations));
  trace.extra["allocations"][0]["kind"] = 7;
  ASSERT_NO_THROW(r = plan_of(trace));
  EXPECT_FALSE(r.plan);
  ASSERT_EQ(r.problems.size(), 1u) << joined(r);
  EXPECT_TRUE(contains(r.problems[0], "allocation 0") && contains(r.problems[0], "\"kind\"")) << r.problems[0];
}

// ---------------------------------------------------------------------------------------------
// docs/examples/inception_block.json: 37 cuDNN/PyTorch kernels and 3 copies, recorded before
// kernels carried their "function" handle, so no kernel can be launched again.

trace::Trace inception() {
  trace::LoadResult loaded = trace::load_trace(NIMBLE_SOURCE_DIR "/docs/examples/inception_block.json");
  EXPECT_TRUE(loaded.trace) << loaded.diagnostics.format("inception_block.json");
  return loaded.trace ? std::move(*loaded.trace) : trace::Trace{};
}

TEST(PlanInception, EveryKernelLacksItsFunctionHandle) {
  trace::Trace trace = inception();
  ASSERT_EQ(trace.tasks.size(), 40u);
  scheduler::schedule_trace(trace);
  ASSERT_TRUE(trace.schedule);
  const PlanResult r = plan_of(trace);
  EXPECT_FALSE(r.plan);
  std::set<trace::TaskId> kernels;
  for (const auto& t : trace.tasks) {
    if (t.kind == "kernel") kernels.insert(t.id);
  }
  ASSERT_EQ(kernels.size(), 37u);
  ASSERT_EQ(r.problems.size(), kernels.size()) << joined(r);
  std::size_t i = 0;
  for (trace::TaskId id : kernels) {
    EXPECT_EQ(r.problems[i++], "task " + std::to_string(id) + " (kernel): missing field \"function\"");
  }
  // The copies (tasks 0, 38, 39) are fine.
  EXPECT_FALSE(contains(joined(r), "(memcpy)")) << joined(r);
}

TEST(PlanInception, WithFunctionHandlesItBuildsAPlan) {
  trace::Trace trace = inception();
  for (auto& t : trace.tasks) {
    if (t.kind == "kernel") t.extra["function"] = "0x" + std::to_string(0x5000 + t.id);
  }
  scheduler::schedule_trace(trace);
  const PlanResult r = plan_of(trace);
  ASSERT_TRUE(r.plan) << joined(r);
  const ReplayPlan& plan = *r.plan;
  ASSERT_EQ(plan.ops.size(), 40u);
  EXPECT_TRUE(plan.scheduled);
  EXPECT_EQ(plan.streams, trace.schedule->streams);
  EXPECT_EQ(plan.ops[0].kind, OpKind::Copy);
  EXPECT_EQ(plan.ops[0].copy.direction, CopyDirection::HtoD);
  EXPECT_EQ(plan.ops[38].copy.direction, CopyDirection::DtoD);
  EXPECT_EQ(plan.ops[39].copy.direction, CopyDirection::DtoH);
  EXPECT_EQ(plan.host_bytes, 1411200u);  // the input copy is the larger host-side one
  // Allocations freed during the iteration are reached through pointer arguments: shadows.
  EXPECT_FALSE(plan.shadow_sizes.empty());
  std::size_t fixes = 0;
  for (const Op& op : plan.ops) fixes += op.kernel.pointer_fixes.size();
  EXPECT_GE(fixes, plan.shadow_sizes.size());
  // Written memory is sorted, disjoint and never inside a freed allocation.
  for (std::size_t i = 1; i < plan.written.size(); ++i) {
    EXPECT_GE(plan.written[i].addr, plan.written[i - 1].addr + plan.written[i - 1].size);
  }
  for (const auto& a : trace.extra["allocations"]) {
    if (!a.value("freed", false)) continue;
    const std::uint64_t addr = std::stoull(a["addr"].get<std::string>(), nullptr, 16);
    for (const MemoryRange& w : plan.written) EXPECT_FALSE(addr >= w.addr && addr < w.addr + w.size) << a.dump();
  }
}

}  // namespace
}  // namespace nimble::replayer
