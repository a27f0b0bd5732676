// The shipped documentation: example traces, the JSON Schema, and the format description agree
// with each other and with the library.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "schema_subset.hpp"
#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

const std::vector<std::string> kExamples = {"tiny.json", "tiny_scheduled.json", "inception_block.json"};

std::string example(const std::string& name) { return read_file(source_dir() / "docs/examples" / name); }
json schema() { return json::parse(read_file(source_dir() / "docs/trace.schema.json")); }
std::string format_doc() { return read_file(source_dir() / "docs/trace-format.md"); }

std::string join(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

TEST(Docs, ExamplesLoadWithoutErrorsOrWarnings) {
  for (const auto& name : kExamples) {
    const auto r = load_trace((source_dir() / "docs/examples" / name).string());
    ASSERT_TRUE(r.trace) << name << "\n" << dump(r.diagnostics);
    EXPECT_TRUE(r.diagnostics.items.empty()) << name << "\n" << dump(r.diagnostics);
  }
}

TEST(Docs, ExamplesAreInNimblesOwnLayout) {
  for (const auto& name : kExamples) {
    const std::string text = example(name);
    EXPECT_EQ(dump_trace(*parse_trace(text).trace), text) << name << " is not what nimble would write";
  }
}

TEST(Docs, InceptionExampleHasParallelBranchesThatJoin) {
  const Trace t = *parse_trace(example("inception_block.json")).trace;
  EXPECT_GE(t.tasks.size(), 35u);
  EXPECT_LE(t.tasks.size(), 45u);
  EXPECT_FALSE(t.schedule) << "the demo schedules it";
  std::map<std::string, int> kinds;
  std::map<TaskId, int> dependents;
  std::size_t joins = 0;
  for (const auto& task : t.tasks) {
    ++kinds[task.kind];
    for (const TaskId d : task.deps) ++dependents[d];
    joins += task.deps.size() >= 3;
    EXPECT_TRUE(task.duration_us && *task.duration_us > 0) << "task " << task.id;
    if (task.kind == "kernel") {
      EXPECT_TRUE(task.extra.contains("name") && task.extra.contains("launch") && task.extra.contains("args")) << task.id;
    }
  }
  EXPECT_GE(kinds["kernel"], 30);
  EXPECT_GE(kinds["memcpy"], 2);
  EXPECT_GE(joins, 2u) << "concatenations join the branches";
  int forks = 0;
  for (const auto& [id, n] : dependents) forks += n >= 3;
  EXPECT_GE(forks, 2) << "several branches start from one tensor";
}

TEST(Docs, TinyExamplesDifferOnlyByTheSchedule) {
  const Trace plain = *parse_trace(example("tiny.json")).trace;
  Trace scheduled = *parse_trace(example("tiny_scheduled.json")).trace;
  EXPECT_EQ(plain.tasks.size(), 6u);
  ASSERT_TRUE(scheduled.schedule);
  scheduled.schedule.reset();
  for (auto& task : scheduled.tasks) {
    EXPECT_TRUE(task.schedule.has_value());
    task.schedule.reset();
  }
  EXPECT_EQ(dump_trace(scheduled), dump_trace(plain));
}

TEST(Docs, SchemaIsJsonSchema2020) {
  const json s = schema();
  EXPECT_EQ(s.at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(s.at("required"), json::parse(R"(["format", "version", "tasks"])"));
  EXPECT_EQ(s.at("$defs").at("task").at("required"), json::parse(R"(["id", "kind", "deps"])"));
}

TEST(Docs, ExamplesConformToTheSchema) {
  const json s = schema();
  for (const auto& name : kExamples) {
    EXPECT_EQ(join(schema_problems(s, json::parse(example(name)))), "") << name;
  }
  EXPECT_EQ(join(schema_problems(s, json::parse(R"({"format": "nimble-trace", "version": 1, "tasks": []})"))), "");
}

TEST(Docs, SchemaRejectsWhatTheValidatorRejects) {
  const json s = schema();
  const std::vector<std::string> broken = {
      R"({"format": "nimble-trace", "version": 1})",
      R"({"format": "nimble-trace", "version": 2, "tasks": []})",
      R"({"format": "nimble-trace", "version": 1, "tasks": [{"kind": "k", "deps": []}]})",
      R"({"format": "nimble-trace", "version": 1, "tasks": [{"id": 0, "kind": "", "deps": []}]})",
      R"({"format": "nimble-trace", "version": 1, "tasks": [{"id": 0, "kind": "k", "deps": ["1"]}]})",
      R"({"format": "nimble-trace", "version": 1, "tasks": [{"id": 0, "kind": "k", "deps": [], "duration_us": -1}]})",
      R"({"format": "nimble-trace", "version": 1, "tasks": [{"id": 0, "kind": "k", "deps": [], "launch": {"grid": [0, 1, 1], "block": [1, 1, 1]}}]})",
      R"({"format": "nimble-trace", "version": 1, "tasks": [{"id": 0, "kind": "k", "deps": [], "mem": [{"alloc": 1, "mode": "r"}]}]})",
      R"({"format": "nimble-trace", "version": 1, "tasks": [{"id": 0, "kind": "k", "deps": [], "copy": {"direction": "up", "bytes": 1}}]})",
      R"({"format": "nimble-trace", "version": 1, "schedule": {"algorithm": "a", "streams": 0, "syncs": 0}, "tasks": []})",
  };
  for (const auto& text : broken) {
    EXPECT_FALSE(schema_problems(s, json::parse(text)).empty()) << "schema accepts " << text;
    EXPECT_FALSE(parse_trace(text).trace) << "validator accepts " << text;
  }
}

// Property names anywhere in the schema.
void collect_properties(const json& node, std::set<std::string>& names) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      if (key == "properties") {
        for (const auto& [name, sub] : value.items()) names.insert(name);
      }
      collect_properties(value, names);
    }
  } else if (node.is_array()) {
    for (const auto& element : node) collect_properties(element, names);
  }
}

TEST(Docs, FormatDescriptionCoversEverySchemaField) {
  std::set<std::string> names;
  collect_properties(schema(), names);
  ASSERT_GT(names.size(), 50u);
  const std::string doc = format_doc();
  for (const auto& name : names) EXPECT_NE(doc.find("`" + name + "`"), std::string::npos) << "`" << name << "` is not documented";
}

std::vector<std::string> json_blocks(const std::string& markdown) {
  std::vector<std::string> blocks;
  const std::regex fence("```json\n([\\s\\S]*?)```");
  for (auto it = std::sregex_iterator(markdown.begin(), markdown.end(), fence); it != std::sregex_iterator(); ++it) {
    blocks.push_back((*it)[1].str());
  }
  return blocks;
}

TEST(Docs, FullExampleInTheDescriptionIsTheScheduledTinyFile) {
  const auto blocks = json_blocks(format_doc());
  const std::string file = example("tiny_scheduled.json");
  EXPECT_EQ(std::count(blocks.begin(), blocks.end(), file), 1) << "docs/trace-format.md must embed tiny_scheduled.json verbatim";
}

TEST(Docs, MinimalExampleInTheDescriptionLoads) {
  const auto blocks = json_blocks(format_doc());
  ASSERT_FALSE(blocks.empty());
  const auto r = parse_trace(blocks.front());
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_TRUE(r.diagnostics.items.empty()) << dump(r.diagnostics);
  EXPECT_EQ(r.trace->tasks.size(), 3u);
}

}  // namespace
}  // namespace nimble::trace::testing
