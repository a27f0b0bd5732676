// Diagnostics: locations, the one-line format, counting and the storage cap.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

TEST(Diagnostics, FormatIsOneLinePerProblem) {
  Diagnostics d;
  d.error(at_task(12, 11, "deps"), "depends on task 99, which does not exist");
  d.warning(at_top("schedule.syncs"), "is 3 but the tasks list 2 waits");
  d.error(at_position(3, 14), "expected ':'");
  EXPECT_EQ(d.format("t.json"),
            "t.json: error: task 12 (index 11), field \"deps\": depends on task 99, which does not exist\n"
            "t.json: warning: top level, field \"schedule.syncs\": is 3 but the tasks list 2 waits\n"
            "t.json: error: line 3, column 14: expected ':'\n");
}

TEST(Diagnostics, FileLevelProblemsHaveNoWherePart) {
  Diagnostics d;
  d.error(at_file(), "the file is empty");
  EXPECT_EQ(d.format("x.json"), "x.json: error: the file is empty\n");
}

TEST(Diagnostics, LocationsCarryStructuredFields) {
  Diagnostics d;
  d.error(at_task(7, 3, "launch.grid"), "m");
  d.error(at_task_index(5, "id"), "m");
  d.error(at_position(2, 9), "m");
  EXPECT_EQ(d.items[0].task_id, 7);
  EXPECT_EQ(d.items[0].task_index, 3u);
  EXPECT_EQ(d.items[0].field, "launch.grid");
  EXPECT_FALSE(d.items[1].task_id.has_value());
  EXPECT_EQ(d.items[1].where, "task at index 5, field \"id\"");
  EXPECT_EQ(d.items[2].line, 2u);
  EXPECT_EQ(d.items[2].column, 9u);
}

TEST(Diagnostics, CountsErrorsAndWarnings) {
  Diagnostics d;
  EXPECT_FALSE(d.has_errors());
  d.warning(at_top(), "w");
  EXPECT_FALSE(d.has_errors());
  d.error(at_top(), "e");
  d.error(at_top(), "e");
  EXPECT_TRUE(d.has_errors());
  EXPECT_EQ(d.error_count(), 2u);
  EXPECT_EQ(d.warning_count(), 1u);
}

TEST(Diagnostics, StoresAtMostMaxItemsAndCountsTheRest) {
  Diagnostics d;
  d.max_items = 3;
  for (int i = 0; i < 5; ++i) d.error(at_top(), "e" + std::to_string(i));
  d.warning(at_top(), "w");
  EXPECT_EQ(d.items.size(), 3u);
  EXPECT_TRUE(d.full());
  EXPECT_EQ(d.error_count(), 5u);
  EXPECT_EQ(d.warning_count(), 1u);
  const std::string text = d.format("f");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  EXPECT_NE(text.find("f: note: 2 more error(s) and 1 more warning(s) not shown"), std::string::npos) << text;
}

TEST(Diagnostics, AppendKeepsSuppressedCounts) {
  Diagnostics a, b;
  b.max_items = 1;
  b.error(at_top(), "1");
  b.error(at_top(), "2");
  a.append(b);
  EXPECT_EQ(a.items.size(), 1u);
  EXPECT_EQ(a.error_count(), 2u);
}

TEST(Diagnostics, ValuesFromTheFileCannotBreakTheOneLineFormat) {
  // A kind with a newline and an id that is a multi-line string: both are quoted, escaped.
  const auto r = parse_trace(trace_text(R"({"id": "1\n2", "kind": 7, "deps": []})"));
  ASSERT_FALSE(r.trace);
  const std::string text = r.diagnostics.format("f");
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), r.diagnostics.items.size()) << text;
  EXPECT_NE(text.find(R"(a string ("1\n2"))"), std::string::npos) << text;
}

}  // namespace
}  // namespace nimble::trace::testing
