// rename_memory: memory dependencies recomputed by allocation identity (address reuse between
// different allocations is no conflict at replay), every other reason kept.
#include <gtest/gtest.h>

#include "nimble/replayer/renaming.hpp"
#include "test_util.hpp"

namespace nimble::replayer {
namespace {

using test::document;
using test::kernel;
using test::parse;
using trace::json;

using Ids = std::vector<trace::TaskId>;

// Allocation 1 is freed before task 1 and allocation 2 gets the same address; allocation 0 is
// elsewhere and live throughout.
const char* const kAllocations = R"("allocations": [
    {"id": 0, "addr": "0x7f0000100000", "size": 4096, "kind": "device"},
    {"id": 1, "addr": "0x7f0000000000", "size": 1024, "kind": "async", "freed": true, "freed_before_task": 1},
    {"id": 2, "addr": "0x7f0000000000", "size": 1024, "kind": "async", "allocated_before_task": 1}])";

std::string mem(const std::string& entries) { return R"("mem": [)" + entries + "]"; }
std::string access(int alloc, int offset, int size, const char* mode) {
  return R"({"alloc": )" + std::to_string(alloc) + R"(, "offset": )" + std::to_string(offset) + R"(, "size": )" +
         std::to_string(size) + R"(, "mode": ")" + mode + R"("})";
}
std::string reasons(const std::string& members) { return R"("dep_reasons": {)" + members + "}"; }

const trace::Task& task(const trace::Trace& t, std::size_t i) { return t.tasks.at(i); }
json reasons_of(const trace::Task& t) { return t.extra.at("dep_reasons"); }

TEST(Renaming, AddressReuseBetweenDifferentAllocationsIsNoDependency) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(1, 0, 1024, "w"))) + ",\n" +
          kernel(1, "[0]", mem(access(2, 0, 1024, "w")) + ", " +
                               reasons(R"("0": "memory WAW 0x7f0000000000..0x7f0000000400")")),
      kAllocations));
  ASSERT_EQ(t.tasks.size(), 2u);
  const RenameStats stats = rename_memory(t);
  EXPECT_TRUE(task(t, 1).deps.empty());
  EXPECT_EQ(reasons_of(task(t, 1)), json::object());
  EXPECT_EQ(stats.edges_before, 1u);
  EXPECT_EQ(stats.edges_after, 0u);
}

TEST(Renaming, RealRawOnOneAllocationIsKeptWithARenamedReason) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(0, 0, 4096, "w"))) + ",\n" +
          kernel(1, "[0]", mem(access(0, 0, 4096, "r")) + ", " +
                               reasons(R"("0": "memory RAW alloc 0 +0x0..+0x1000")")),
      kAllocations));
  rename_memory(t);
  EXPECT_EQ(task(t, 1).deps, Ids{0});
  const std::string why = reasons_of(task(t, 1)).at("0").get<std::string>();
  EXPECT_NE(why.find("memory RAW alloc 0 (renamed)"), std::string::npos) << why;
}

TEST(Renaming, WarAndWawOnOneAllocationAreKeptToo) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(0, 0, 4096, "r"))) + ",\n" +
          kernel(1, "[0]", mem(access(0, 0, 4096, "w")) + ", " + reasons(R"("0": "memory WAR alloc 0")")) + ",\n" +
          kernel(2, "[1]", mem(access(0, 0, 4096, "w")) + ", " + reasons(R"("1": "memory WAW alloc 0")")),
      kAllocations));
  rename_memory(t);
  EXPECT_EQ(task(t, 1).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 1)).at("0"), "memory WAR alloc 0 (renamed)");
  // Task 2 writes over task 1's write (WAW). Its WAR on task 0's read is implied through task 1
  // (which follows task 0), so, as in a recording, no edge of its own.
  EXPECT_EQ(task(t, 2).deps, Ids{1});
  EXPECT_EQ(reasons_of(task(t, 2)).at("1"), "memory WAW alloc 0 (renamed)");
}

TEST(Renaming, NonMemoryReasonsAreKeptWithoutAMemoryConflict) {
  for (const std::string why : {"event", "stream", "host-sync", "default-stream",
                                "memory WAW 0x7f0000000000..0x7f0000000400; event",
                                "stream; memory RAW alloc 1 +0x0..+0x400"}) {
    trace::Trace t = parse(document(
        kernel(0, "[]", mem(access(1, 0, 1024, "w"))) + ",\n" +
            kernel(1, "[0]", mem(access(2, 0, 1024, "w")) + ", " + reasons(R"("0": ")" + why + R"(")")),
        kAllocations));
    const RenameStats stats = rename_memory(t);
    EXPECT_EQ(task(t, 1).deps, Ids{0}) << why;
    EXPECT_EQ(reasons_of(task(t, 1)).at("0"), why);
    EXPECT_EQ(stats.edges_after, 1u) << why;
  }
}

TEST(Renaming, NonMemoryReasonGainsTheRenamedConflictWhenThereIsOne) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(0, 0, 4096, "w"))) + ",\n" +
          kernel(1, "[0]", mem(access(0, 0, 4096, "r")) + ", " + reasons(R"("0": "stream")")),
      kAllocations));
  rename_memory(t);
  EXPECT_EQ(task(t, 1).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 1)).at("0"), "stream; memory RAW alloc 0 (renamed)");
}

TEST(Renaming, DependencyWithoutARecordedReasonIsKept) {
  // No dep_reasons at all, and dep_reasons without an entry for the dependency.
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(1, 0, 1024, "w"))) + ",\n" + kernel(1, "[0]", mem(access(2, 0, 1024, "w"))) +
          ",\n" + kernel(2, "[1]", mem(access(0, 0, 16, "r")) + ", " + reasons(R"("7": "event")")),
      kAllocations));
  const RenameStats stats = rename_memory(t);
  EXPECT_EQ(task(t, 1).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 1)).at("0"), "kept");
  EXPECT_EQ(task(t, 2).deps, Ids{1});
  EXPECT_EQ(reasons_of(task(t, 2)).at("1"), "kept");
  EXPECT_EQ(stats.edges_before, 2u);
  EXPECT_EQ(stats.edges_after, 2u);
}

TEST(Renaming, NonStringReasonCountsAsUnknownAndIsKept) {
  // dep_reasons is descriptive: a malformed entry is only a warning when loading, and renaming
  // treats it like a missing reason instead of throwing.
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(1, 0, 1024, "w"))) + ",\n" +
          kernel(1, "[0]", mem(access(2, 0, 1024, "w")) + ", " + reasons(R"("0": 5)")),
      kAllocations));
  rename_memory(t);
  EXPECT_EQ(task(t, 1).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 1)).at("0"), "kept");
}

TEST(Renaming, TaskTouchingEverythingKeepsAllItsDependencies) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(1, 0, 1024, "w"))) + ",\n" + kernel(1, "[]", mem(access(0, 0, 16, "r"))) + ",\n" +
          kernel(2, "[0, 1]", R"("mem": [{"everything": true, "mode": "rw"}], )" +
                                  reasons(R"("0": "memory WAW everything", "1": "memory WAR everything")")),
      kAllocations));
  const RenameStats stats = rename_memory(t);
  EXPECT_EQ(task(t, 2).deps, (Ids{0, 1}));
  EXPECT_EQ(reasons_of(task(t, 2)).size(), 2u);
  EXPECT_EQ(stats.edges_before, 2u);
  EXPECT_EQ(stats.edges_after, 2u);
}

TEST(Renaming, TasksAfterOneTouchingEverythingStillFollowIt) {
  // Task 0 writes memory nimble cannot see (it may be allocation 0); task 1 reads allocation 0
  // and task 2 writes allocation 2. Their only recorded reasons are memory ones, so renaming
  // must find the conflicts with task 0 again, and task 3's write must follow task 1's
  // read-everything.
  trace::Trace t = parse(document(
      kernel(0, "[]", R"("mem": [{"everything": true, "mode": "w"}])") + ",\n" +
          kernel(1, "[0]", mem(access(0, 0, 16, "r")) + ", " + reasons(R"("0": "memory RAW everything")")) + ",\n" +
          kernel(2, "[0]", mem(access(2, 0, 64, "w")) + ", " + reasons(R"("0": "memory WAW everything")")) + ",\n" +
          kernel(3, "[1, 2]", R"("mem": [{"everything": true, "mode": "r"}], )" +
                                  reasons(R"("1": "memory RAW everything", "2": "memory RAW everything")")) +
          ",\n" + kernel(4, "[3]", mem(access(0, 0, 16, "w")) + ", " + reasons(R"("3": "memory WAR everything")")),
      kAllocations));
  rename_memory(t);
  EXPECT_EQ(task(t, 1).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 1)).at("0"), "memory RAW everything (renamed)");
  EXPECT_EQ(task(t, 2).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 2)).at("0"), "memory WAW everything (renamed)");
  EXPECT_EQ(task(t, 3).deps, (Ids{0, 1, 2}));
  // Task 4 writes allocation 0 after task 3 read everything and task 1 read allocation 0.
  EXPECT_EQ(task(t, 4).deps, (Ids{0, 1, 3}));
  EXPECT_EQ(reasons_of(task(t, 4)).at("3"), "memory WAR everything (renamed)");
}

TEST(Renaming, ReadAfterReadIsNoDependency) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(0, 0, 4096, "r"))) + ",\n" +
          kernel(1, "[0]", mem(access(0, 0, 4096, "r")) + ", " + reasons(R"("0": "memory RAR?")")),
      kAllocations));
  rename_memory(t);
  EXPECT_TRUE(task(t, 1).deps.empty());
  EXPECT_EQ(reasons_of(task(t, 1)), json::object());
}

TEST(Renaming, RangesInsideOneAllocationOverlapOrNot) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(0, 0, 1024, "w"))) + ",\n" +
          // Disjoint from task 0 (touching at 1024 is not overlapping).
          kernel(1, "[0]", mem(access(0, 1024, 1024, "w")) + ", " + reasons(R"("0": "memory WAW alloc 0")")) +
          ",\n" +
          // Overlaps task 0 by one byte, task 1 not at all.
          kernel(2, "[0, 1]", mem(access(0, 1023, 1, "r")) + ", " +
                                  reasons(R"("0": "memory RAW alloc 0", "1": "memory RAW alloc 0")")),
      kAllocations));
  const RenameStats stats = rename_memory(t);
  EXPECT_TRUE(task(t, 1).deps.empty());
  EXPECT_EQ(task(t, 2).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 2)).at("0"), "memory RAW alloc 0 (renamed)");
  EXPECT_EQ(stats.edges_before, 3u);
  EXPECT_EQ(stats.edges_after, 1u);
}

TEST(Renaming, UntrackedAddressesConflictByAddress) {
  trace::Trace t = parse(document(
      kernel(0, "[]", R"("mem": [{"addr": "0x560000001000", "size": 64, "mode": "w"}])") + ",\n" +
          kernel(1, "[]", R"("mem": [{"addr": "0x560000001020", "size": 64, "mode": "r"}])") + ",\n" +
          kernel(2, "[]", R"("mem": [{"addr": "0x560000001040", "size": 64, "mode": "r"}])"),
      kAllocations));
  rename_memory(t);
  EXPECT_EQ(task(t, 1).deps, Ids{0});
  EXPECT_EQ(reasons_of(task(t, 1)).at("0"), "memory RAW alloc -1 (renamed)");
  EXPECT_TRUE(task(t, 2).deps.empty());
}

TEST(Renaming, StatsCountEdgesBeforeAndAfterOverTheTrace) {
  trace::Trace t = parse(document(
      kernel(0, "[]", mem(access(1, 0, 1024, "w"))) + ",\n" +
          kernel(1, "[0]", mem(access(2, 0, 1024, "w")) + ", " + reasons(R"("0": "memory WAW 0x7f0000000000")")) +
          ",\n" +
          kernel(2, "[0, 1]", mem(access(2, 0, 1024, "r")) + ", " +
                                  reasons(R"("0": "memory RAW 0x7f0000000000", "1": "memory RAW 0x7f0000000000")")) +
          ",\n" + kernel(3, "[2]", mem(access(0, 0, 8, "w")) + ", " + reasons(R"("2": "stream")")),
      kAllocations));
  const RenameStats stats = rename_memory(t);
  EXPECT_EQ(stats.edges_before, 4u);
  EXPECT_EQ(stats.edges_after, 2u);  // 2 -> 1 (RAW alloc 2) and 3 -> 2 (stream)
  EXPECT_TRUE(task(t, 1).deps.empty());
  EXPECT_EQ(task(t, 2).deps, Ids{1});
  EXPECT_EQ(task(t, 3).deps, Ids{2});
  // Every task ends with a dep_reasons object, one entry per dependency.
  for (const trace::Task& k : t.tasks) EXPECT_EQ(reasons_of(k).size(), k.deps.size()) << "task " << k.id;
}

}  // namespace
}  // namespace nimble::replayer
