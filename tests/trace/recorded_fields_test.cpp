// The recorder's optional fields: type-checked when present, never required.
#include <gtest/gtest.h>

#include "nimble/trace/validate.hpp"
#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

// One kernel task (id 1) with `fields` merged in, and the top-level `top` fields.
Diagnostics check(const json& fields, const json& top = json::object()) {
  Trace t = trace_with_deps({{}, {0}});
  for (const auto& [k, v] : fields.items()) t.tasks[1].extra[k] = v;
  for (const auto& [k, v] : top.items()) t.extra[k] = v;
  Diagnostics d;
  validate_recorded_fields(t, d);
  return d;
}

const json kAllocations = json::parse(R"([{"id": 3, "addr": "0x7f0000001000", "size": 4096, "kind": "device"}])");

TEST(RecordedFields, NoneIsRequired) {
  EXPECT_TRUE(check(json::object()).items.empty());
}

TEST(RecordedFields, CompleteKernelTaskIsClean) {
  const json fields = json::parse(R"json({
    "name": "void k(float*)", "mangled": "_Z1kPf", "api": "cuLaunchKernelEx", "library_call": null,
    "thread": 4242, "start_us": 12.5, "correlation_id": 9, "function": "0x55aa00", "handle": "CUfunction",
    "launch": {"grid": [2, 1, 1], "block": [128, 1, 1], "shared_mem_bytes": 0, "cluster": [2, 1, 1],
               "cooperative": false, "priority": -1, "attributes": [{"id": 4, "name": "cluster_dimension", "value": "02000000"}]},
    "args": {"bytes": "10100000007f000004000000", "params": [{"offset": 0, "size": 8}, {"offset": 8, "size": 4}],
             "pointers": [{"offset": 0, "alloc": 3, "alloc_offset": 16}]},
    "mem": [{"alloc": 3, "offset": 0, "size": 4096, "mode": "rw"}, {"addr": "0x1000", "size": 8, "mode": "r"},
            {"everything": true, "mode": "rw"}],
    "dep_reasons": {"0": "stream; memory RAW alloc 3 +0x0..+0x1000"}
  })json");
  const Diagnostics d = check(fields, {{"allocations", kAllocations}});
  EXPECT_TRUE(d.items.empty()) << dump(d);
}

TEST(RecordedFields, LaunchProblemsAreErrors) {
  Diagnostics d = check({{"launch", {{"grid", {0, 1, 1}}, {"block", {32, 1}}, {"shared_mem_bytes", -1}, {"cooperative", 1}}}});
  EXPECT_NE(find(d, Severity::Error, "[x, y, z]", 1, "launch.grid"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "[x, y, z]", 1, "launch.block"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "at least 0", 1, "launch.shared_mem_bytes"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "true or false", 1, "launch.cooperative"), nullptr) << dump(d);
  d = check({{"launch", {{"grid", {1, 1, 1}}}}});
  EXPECT_NE(find(d, Severity::Error, "needs \"block\"", 1, "launch.block"), nullptr) << dump(d);
  d = check({{"launch", "big"}});
  EXPECT_NE(find(d, Severity::Error, "must be an object", 1, "launch"), nullptr) << dump(d);
}

TEST(RecordedFields, ArgumentBuffer) {
  Diagnostics d = check({{"args", {{"bytes", "0g"}}}});
  EXPECT_NE(find(d, Severity::Error, "even number of hex digits", 1, "args.bytes"), nullptr) << dump(d);
  d = check({{"args", {{"bytes", "abc"}}}});
  EXPECT_NE(find(d, Severity::Error, "even number of hex digits", 1, "args.bytes"), nullptr) << dump(d);
  d = check({{"args", {{"bytes", "00000000"}, {"params", {{{"offset", 2}, {"size", 4}}}}}}});
  EXPECT_NE(find(d, Severity::Error, "covers bytes [2, 6) but \"args.bytes\" holds 4 bytes", 1, "args.params[0]"), nullptr)
      << dump(d);
  d = check({{"args", {{"params", json::array()}}}});
  EXPECT_NE(find(d, Severity::Error, "needs \"bytes\"", 1, "args.bytes"), nullptr) << dump(d);
  d = check({{"args", {{"known", false}}}});
  EXPECT_TRUE(d.items.empty()) << "unreadable arguments are allowed\n" << dump(d);
  // The bytes the program passed, when fewer: never more than there are.
  d = check({{"args", {{"bytes", "00000000"}, {"params", {{{"offset", 0}, {"size", 4}}}}, {"passed_bytes", 2}}}});
  EXPECT_TRUE(d.items.empty()) << dump(d);
  d = check({{"args", {{"bytes", "00000000"}, {"passed_bytes", 5}}}});
  EXPECT_NE(find(d, Severity::Error, "\"args.passed_bytes\" is 5 but \"args.bytes\" holds 4 bytes", 1, "args.passed_bytes"),
            nullptr) << dump(d);
  d = check({{"args", {{"bytes", "00000000"}, {"passed_bytes", "2"}}}});
  EXPECT_NE(find(d, Severity::Error, "", 1, "args.passed_bytes"), nullptr) << dump(d);
}

TEST(RecordedFields, PointersMustResolveAndAgreeWithTheBytes) {
  const json top = {{"allocations", kAllocations}};
  Diagnostics d = check({{"args", {{"bytes", "0000000000000000"}, {"pointers", {{{"offset", 0}, {"alloc", 9}, {"alloc_offset", 0}}}}}}}, top);
  EXPECT_NE(find(d, Severity::Error, "allocation 9, which is not in the top-level \"allocations\"", 1, "args.pointers[0].alloc"),
            nullptr) << dump(d);
  d = check({{"args", {{"bytes", "0000000000000000"}, {"pointers", {{{"offset", 0}, {"alloc", 3}, {"alloc_offset", 0}}}}}}}, top);
  EXPECT_NE(find(d, Severity::Warning, "hold 0x0, but allocation 3 + 0 is 0x7f0000001000", 1, "args.pointers[0]"), nullptr)
      << dump(d);
  d = check({{"args", {{"bytes", "0000"}, {"pointers", {{{"offset", 0}, {"alloc", 3}, {"alloc_offset", 0}}}}}}}, top);
  EXPECT_NE(find(d, Severity::Error, "covers bytes [0, 8)", 1, "args.pointers[0]"), nullptr) << dump(d);
}

TEST(RecordedFields, MemoryAccesses) {
  const json top = {{"allocations", kAllocations}};
  Diagnostics d = check({{"mem", {{{"alloc", 3}, {"offset", 0}, {"size", 8}, {"mode", "x"}}}}}, top);
  EXPECT_NE(find(d, Severity::Error, "must be one of \"r\", \"w\", \"rw\"", 1, "mem[0].mode"), nullptr) << dump(d);
  d = check({{"mem", {{{"alloc", 4}, {"offset", 0}, {"size", 8}, {"mode", "r"}}}}}, top);
  EXPECT_NE(find(d, Severity::Error, "allocation 4, which is not", 1, "mem[0].alloc"), nullptr) << dump(d);
  d = check({{"mem", {{{"alloc", 3}, {"offset", 4000}, {"size", 200}, {"mode", "r"}}}}}, top);
  EXPECT_NE(find(d, Severity::Warning, "goes past the end of allocation 3 (4096 bytes)", 1, "mem[0].alloc"), nullptr) << dump(d);
  d = check({{"mem", {{{"alloc", 3}, {"mode", "r"}}}}}, top);
  EXPECT_NE(find(d, Severity::Error, "needs \"offset\"", 1, "mem[0].offset"), nullptr) << dump(d);
  d = check({{"mem", {{{"addr", 12}, {"size", 1}, {"mode", "w"}}}}});
  EXPECT_NE(find(d, Severity::Error, "hex string", 1, "mem[0].addr"), nullptr) << dump(d);
}

TEST(RecordedFields, CopiesAndMemsets) {
  Diagnostics d = check({{"copy", {{"direction", "up"}, {"src", "0x10"}, {"dst", "0x20"}, {"bytes", 4}}}});
  EXPECT_NE(find(d, Severity::Error, "must be one of \"HtoD\"", 1, "copy.direction"), nullptr) << dump(d);
  d = check({{"copy", {{"direction", "HtoD"}, {"src", 16}, {"bytes", 4}}}});
  EXPECT_NE(find(d, Severity::Error, "hex string", 1, "copy.src"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "needs \"dst\"", 1, "copy.dst"), nullptr) << dump(d);
  d = check(json::parse(R"({"copy": {"direction": "batch", "bytes": 8, "count": 2,
      "copies": [{"direction": "HtoD", "src": "0x10", "dst": "0x20", "bytes": 4}, {"direction": "DtoH", "src": "0x30", "bytes": 4}]}})"));
  ASSERT_EQ(d.items.size(), 1u) << dump(d);
  EXPECT_EQ(d.items[0].field, "copy.copies[1].dst");
  d = check({{"memset", {{"dst", "0x10"}, {"value", 1}, {"element_size", 4}, {"bytes", 6}}}});
  EXPECT_NE(find(d, Severity::Error, "multiple of \"memset.element_size\" (4)", 1, "memset.bytes"), nullptr) << dump(d);
  d = check({{"memset", {{"dst", "0x10"}, {"value", 1}, {"element_size", 3}, {"bytes", 6}}}});
  EXPECT_NE(find(d, Severity::Error, "1, 2 or 4", 1, "memset.element_size"), nullptr) << dump(d);
}

TEST(RecordedFields, DescriptiveFieldsAreWarnings) {
  const Diagnostics d = check({{"name", 5}, {"api", true}, {"thread", -1}, {"start_us", "soon"},
                               {"dep_reasons", {{"0", "stream"}, {"7", "event"}, {"x", 1}}}, {"sync", "device"}});
  EXPECT_EQ(d.error_count(), 0u) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "must be a string (or null", 1, "name"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "must be a string", 1, "api"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "at least 0", 1, "thread"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "microseconds", 1, "start_us"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "reason for task 7, which is not in \"deps\"", 1, "dep_reasons.7"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "keys must be dependency ids", 1, "dep_reasons.x"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "must be a string such as \"stream\"", 1, "dep_reasons.x"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "\"stream\", \"event\", \"context\"", 1, "sync"), nullptr) << dump(d);
}

TEST(RecordedFields, LibraryCallNumberAndKey) {
  EXPECT_EQ(check({{"library_call", "cudnnBackendExecute"}, {"library_call_id", 3}, {"library_key", "0xfeed"}}).items.size(),
            0u);
  const Diagnostics d = check({{"library_call_id", -2}, {"library_key", "feed"}});
  EXPECT_EQ(d.error_count(), 0u) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "at least 0", 1, "library_call_id"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "", 1, "library_key"), nullptr) << dump(d);
}

TEST(RecordedFields, TopLevelLists) {
  const json top = json::parse(R"({
    "allocations": [{"id": 1, "addr": "0x1000", "size": 8}, {"id": 1, "addr": "zero", "size": -8, "kind": "gpu"}],
    "streams": [{"index": 0, "handle": "0x1", "kind": "legacy"}, {"index": 0, "flags": -1}],
    "capture": {"range": "auto", "iteration": 2, "truncated": true},
    "device": "H200"
  })");
  const Diagnostics d = check(json::object(), top);
  EXPECT_NE(find(d, Severity::Error, "allocation id 1 is used twice", std::nullopt, "allocations[1].id"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "hex string", std::nullopt, "allocations[1].addr"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Error, "at least 0", std::nullopt, "allocations[1].size"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "must be one of \"device\"", std::nullopt, "allocations[1].kind"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "stream index 0 is listed twice", std::nullopt, "streams[1].index"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "at least 0", std::nullopt, "streams[1].flags"), nullptr) << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "may end in the middle of an iteration", std::nullopt, "capture.truncated"), nullptr)
      << dump(d);
  EXPECT_NE(find(d, Severity::Warning, "must be an object", std::nullopt, "device"), nullptr) << dump(d);
}

TEST(RecordedFields, TaskStreamShouldBeListed) {
  Trace t = trace_with_deps({{}});
  t.tasks[0].stream = 3;
  t.extra["streams"] = json::parse(R"([{"index": 0}])");
  Diagnostics d;
  validate_recorded_fields(t, d);
  EXPECT_NE(find(d, Severity::Warning, "not an index in the top-level \"streams\"", 0, "stream"), nullptr) << dump(d);
}

TEST(RecordedFields, ProblemsReachTheLoader) {
  const auto r = parse_trace(trace_text(R"({"id": 0, "kind": "kernel", "deps": [], "launch": {"grid": [1, 1, 1], "block": "x"}})"));
  ASSERT_FALSE(r.trace);
  EXPECT_EQ(r.diagnostics.format("t.json"),
            "t.json: error: task 0 (index 0), field \"launch.block\": \"launch.block\" must be [x, y, z] with three "
            "integers from 1 to 4294967295, got a string (\"x\")\n");
}

}  // namespace
}  // namespace nimble::trace::testing
