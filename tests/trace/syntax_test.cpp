// JSON text problems: each reported with the line and column an editor shows.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

// The single syntax diagnostic of `text`.
Diagnostic syntax_error(const std::string& text) {
  const auto r = parse_trace(text);
  EXPECT_FALSE(r.trace);
  EXPECT_EQ(r.diagnostics.items.size(), 1u) << dump(r.diagnostics);
  return r.diagnostics.items.empty() ? Diagnostic{} : r.diagnostics.items[0];
}

TEST(Syntax, MissingCommaNamesLineAndColumn) {
  const Diagnostic d = syntax_error("{\n  \"format\": \"nimble-trace\",\n  \"version\": 1\n  \"tasks\": []\n}\n");
  EXPECT_EQ(d.line, 4u);
  EXPECT_EQ(d.column, 3u);
  EXPECT_EQ(d.where, "line 4, column 3");
  EXPECT_NE(d.message.find("expected ',' or '}' after an object member"), std::string::npos) << d.message;
}

TEST(Syntax, ColumnsCountCharactersNotBytes) {
  // "é" and "語" are 2 and 3 bytes; the bad token 'x' is the 11th character of line 2.
  const Diagnostic d = syntax_error("{\"a\": 1,\n\"é語\": [1, x]}");
  EXPECT_EQ(d.line, 2u);
  EXPECT_EQ(d.column, 11u);
}

TEST(Syntax, TruncatedFilePointsAtTheEnd) {
  const Diagnostic d = syntax_error("{\n  \"format\": \"nimble-trace\",\n  \"tasks\": [\n    {\"id\": 1");
  EXPECT_EQ(d.line, 4u);
  EXPECT_EQ(d.column, 13u);
  EXPECT_NE(d.message.find("truncated"), std::string::npos) << d.message;
}

TEST(Syntax, EmptyAndBlankFiles) {
  for (const std::string text : {"", "  \n\t\r\n"}) {
    const auto r = parse_trace(text);
    EXPECT_FALSE(r.trace);
    ASSERT_EQ(r.diagnostics.items.size(), 1u);
    EXPECT_NE(r.diagnostics.items[0].message.find("the file is empty"), std::string::npos);
    EXPECT_EQ(r.diagnostics.format("e.json").rfind("e.json: error: the file is empty", 0), 0u);
  }
}

TEST(Syntax, ByteOrderMarkIsRejectedWithAFix) {
  const Diagnostic d = syntax_error("\xEF\xBB\xBF{\"format\": \"nimble-trace\", \"version\": 1, \"tasks\": []}");
  EXPECT_EQ(d.line, 1u);
  EXPECT_EQ(d.column, 1u);
  EXPECT_NE(d.message.find("byte order mark"), std::string::npos);
  EXPECT_NE(d.message.find("without BOM"), std::string::npos);
}

TEST(Syntax, Utf16IsRejected) {
  const Diagnostic d = syntax_error(std::string("\xFF\xFE{\0\"\0", 6));
  EXPECT_NE(d.message.find("UTF-16"), std::string::npos);
}

TEST(Syntax, NamedMistakes) {
  struct Case { std::string text; std::string message; std::size_t column; };
  const std::vector<Case> cases = {
      {R"({"a": [1, 2,]})", "trailing comma before ']'", 13},
      {R"({"a": 1,})", "trailing comma before '}'", 9},
      {R"({"a": // note
1})", "comments are not allowed", 7},
      {R"({"a": NaN})", "NaN and Infinity", 7},
      {R"({"a": 012})", "leading zeros", 7},
      {R"({"a": -})", "expected a digit after '-'", 8},
      {R"({"a": 1.})", "digit after the decimal point", 9},
      {R"({"a": 1e})", "digit in the exponent", 9},
      {R"({"a": tru})", "invalid literal", 7},
      {R"({"a": "x\q"})", "invalid escape", 9},
      {R"({"a": "\u12"})", "4 hex digits", 8},
      {R"({"a": "\udc00"})", "lone low surrogate", 8},
      {R"({"a": "\ud800x"})", "lone high surrogate", 8},
      {"{\"a\": \"x\ny\"}", "control character U+000A", 9},
      {"{\"a\": \"\xC3\x28\"}", "invalid UTF-8", 8},
      {"{\"a\": \"\xED\xA0\x80\"}", "invalid UTF-8", 8},
      {R"({"a": 1} {"b": 2})", "after the end of the JSON value", 10},
      {R"({a: 1})", "expected a key in double quotes", 2},
      {R"({"a" 1})", "expected ':' after the key", 6},
      {R"([1 2])", "expected ',' or ']'", 4},
      {"{\"a\": \"unterminated", "has no closing '\"'", 7},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const Diagnostic d = syntax_error(c.text);
    EXPECT_NE(d.message.find(c.message), std::string::npos) << d.message;
    EXPECT_EQ(d.column, c.column) << d.where;
  }
}

TEST(Syntax, ValidEscapesDecode) {
  const auto r = parse_trace(trace_text(R"({"id": 0, "kind": "k\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "deps": []})"));
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_EQ(r.trace->tasks[0].kind, "k\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(Syntax, TopLevelMustBeAnObject) {
  for (const std::string text : {"[]", "42", "\"trace\"", "null"}) {
    const auto r = parse_trace(text);
    EXPECT_FALSE(r.trace);
    ASSERT_EQ(r.diagnostics.items.size(), 1u) << text;
    EXPECT_NE(r.diagnostics.items[0].message.find("the top level must be a JSON object"), std::string::npos);
  }
}

TEST(Syntax, DuplicateKeysNameTheTaskAndField) {
  const auto r = parse_trace(trace_text(R"({"id": 4, "kind": "k", "deps": [], "kind": "j"},
                                           {"id": 5, "kind": "k", "deps": [], "launch": {"grid": [1,1,1], "grid": [2,1,1], "block": [1,1,1]}})"));
  ASSERT_FALSE(r.trace);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "appears more than once", 4, "kind"), nullptr) << dump(r.diagnostics);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "appears more than once", 5, "launch.grid"), nullptr) << dump(r.diagnostics);
  EXPECT_EQ(r.diagnostics.error_count(), 2u) << dump(r.diagnostics);
}

TEST(Syntax, DuplicateKeysInLargeObjects) {
  std::string members;
  for (int i = 0; i < 100; ++i) members += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  const auto r = parse_trace(trace_text("", "\"table\": {" + members + "\"k42\": 0},"));
  ASSERT_FALSE(r.trace);
  ASSERT_EQ(r.diagnostics.error_count(), 1u) << dump(r.diagnostics);
  EXPECT_EQ(r.diagnostics.items[0].where, "top level, field \"table.k42\"");
}

TEST(Syntax, NumbersTooLargeForADouble) {
  const auto r = parse_trace(trace_text(R"({"id": 0, "kind": "k", "deps": [], "duration_us": 1e999, "weight": [1, -2e400]})"));
  ASSERT_FALSE(r.trace);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "-2e400", 0, "weight[1]"), nullptr) << dump(r.diagnostics);
  EXPECT_NE(find(r.diagnostics, Severity::Error, "finite", 0, "duration_us"), nullptr) << dump(r.diagnostics);
  EXPECT_EQ(r.diagnostics.error_count(), 2u) << "one message per problem\n" << dump(r.diagnostics);
}

}  // namespace
}  // namespace nimble::trace::testing
