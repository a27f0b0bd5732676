#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "export_test_support.hpp"
#include "nimble/export/dot.hpp"
#include "nimble/export/names.hpp"
#include "nimble/scheduler/reduction.hpp"
#include "nimble/scheduler/trace_schedule.hpp"
#include "nimble/trace/validate.hpp"

namespace nimble::exporter {
namespace {

using export_test::DotFile;
using export_test::load_example;
using export_test::make_task;
using export_test::parse_dot;

std::string node(trace::TaskId id) { return "t" + std::to_string(id); }

// Text as a DOT label shows it after parse_dot: line breaks as the two characters \n, carriage
// returns dropped, other control characters as spaces.
std::string as_label(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      continue;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// Edges of the transitive reduction, computed here independently of the exporter's own loop.
std::set<std::pair<trace::TaskId, trace::TaskId>> reduced_edges(const trace::Trace& trace) {
  const scheduler::Adjacency preds =
      scheduler::transitive_reduction(scheduler::predecessor_adjacency(scheduler::dag_from_trace(trace)));
  std::set<std::pair<trace::TaskId, trace::TaskId>> edges;
  for (scheduler::NodeIndex v = 0; v < preds.nodes(); ++v) {
    for (scheduler::NodeIndex u : preds[v]) edges.emplace(trace.tasks[u].id, trace.tasks[v].id);
  }
  return edges;
}

// Renders with Graphviz when it is installed; structure is checked either way by parse_dot.
void render_if_graphviz(const std::string& text, const std::string& tag) {
  if (!export_test::have_command("dot")) return;
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / ("nimble_export_" + std::to_string(getpid()) + "_" + tag + ".dot")).string();
  const std::string svg = in + ".svg";
  export_test::write_text(in, text);
  const auto run = export_test::run_shell("dot -Tsvg " + export_test::shell_quote(in) + " -o " +
                                          export_test::shell_quote(svg));
  EXPECT_EQ(run.status, 0) << "dot rejected the file: " << run.err;
  EXPECT_EQ(run.err.find("rror"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("arning"), std::string::npos) << run.err;
  EXPECT_NE(export_test::read_text(svg).find("</svg>"), std::string::npos);
  std::filesystem::remove(in);
  std::filesystem::remove(svg);
}

DotFile export_and_check(const trace::Trace& trace, const DotOptions& options = {}) {
  const DotExport result = export_dot(trace, options);
  const DotFile dot = parse_dot(result.text);
  EXPECT_TRUE(dot.ok) << dot.error << "\n" << result.text;
  if (!dot.ok) return dot;
  // One node per task, nothing else.
  EXPECT_EQ(dot.node_statements, trace.tasks.size());
  EXPECT_EQ(dot.nodes.size(), trace.tasks.size());
  for (const auto& task : trace.tasks) {
    if (!dot.nodes.count(node(task.id))) {
      ADD_FAILURE() << "no node for task " << task.id;
      continue;
    }
    EXPECT_EQ(dot.nodes.at(node(task.id)).attributes.at("fillcolor"), kind_color(task.kind));
  }
  // Exactly the reduced edges.
  std::set<std::pair<trace::TaskId, trace::TaskId>> drawn;
  for (const auto& e : dot.edges) {
    EXPECT_EQ(e.from.at(0), 't');
    drawn.emplace(std::stoll(e.from.substr(1)), std::stoll(e.to.substr(1)));
  }
  EXPECT_EQ(dot.edges.size(), drawn.size()) << "an edge is drawn twice";
  EXPECT_EQ(drawn, reduced_edges(trace));
  EXPECT_EQ(result.reduced_edges, dot.edges.size());
  EXPECT_EQ(result.nodes, trace.tasks.size());
  // Edge labels are the recorded reasons of those very edges.
  std::map<trace::TaskId, const trace::Task*> by_id;
  for (const auto& task : trace.tasks) by_id[task.id] = &task;
  for (const auto& e : dot.edges) {
    const trace::Task& to = *by_id.at(std::stoll(e.to.substr(1)));
    const auto reasons = to.extra.find("dep_reasons");
    const std::string from_id = e.from.substr(1);
    if (reasons != to.extra.end() && reasons->contains(from_id)) {
      EXPECT_TRUE(e.attributes.count("label")) << e.from << " -> " << e.to;
      if (e.attributes.count("label")) {
        EXPECT_EQ(e.attributes.at("label"), as_label((*reasons)[from_id].get<std::string>()));
      }
    } else {
      EXPECT_FALSE(e.attributes.count("label"));
    }
  }
  EXPECT_EQ(result.text, export_dot(trace, options).text) << "not deterministic";
  return dot;
}

TEST(Dot, RedundantEdgeIsLeftOutAndReasonsKept) {
  const trace::Trace trace = export_test::redundant_edge_trace();
  ASSERT_FALSE(trace::validate_trace(trace).has_errors());
  const DotExport result = export_dot(trace);
  EXPECT_EQ(result.edges, 3u);
  EXPECT_EQ(result.reduced_edges, 2u);
  const DotFile dot = export_and_check(trace);
  ASSERT_EQ(dot.edges.size(), 2u);
  EXPECT_EQ(dot.edges[0].from, "t10");
  EXPECT_EQ(dot.edges[0].to, "t20");
  EXPECT_EQ(dot.edges[0].attributes.at("label"), "stream; memory RAW alloc 0 +0x0..+0x10");
  EXPECT_EQ(dot.edges[1].from, "t20");
  EXPECT_EQ(dot.edges[1].to, "t30");
  EXPECT_EQ(dot.edges[1].attributes.at("label"), "event");
  render_if_graphviz(result.text, "redundant");
}

TEST(Dot, DiamondWithShortcutsKeepsOnlyTheDiamond) {
  trace::Trace trace;
  trace.tasks = {make_task(1, {}), make_task(2, {1}), make_task(3, {1}), make_task(4, {2, 3, 1}),
                 make_task(5, {4, 1, 2, 3})};
  const DotExport result = export_dot(trace);
  EXPECT_EQ(result.edges, 9u);
  EXPECT_EQ(result.reduced_edges, 5u);
  export_and_check(trace);
}

TEST(Dot, BundledExamples) {
  for (const char* name : {"tiny.json", "tiny_scheduled.json", "inception_block.json"}) {
    SCOPED_TRACE(name);
    const trace::Trace trace = load_example(name);
    const DotFile dot = export_and_check(trace);
    const DotExport result = export_dot(trace);
    EXPECT_LE(result.reduced_edges, result.edges);
    // Labels: a short name, then "#id, duration".
    for (const auto& task : trace.tasks) {
      const std::string& label = dot.nodes.at(node(task.id)).attributes.at("label");
      const std::size_t line = label.find("\\n");
      ASSERT_NE(line, std::string::npos) << label;
      EXPECT_LE(line, 40u) << label;
      EXPECT_EQ(label.substr(line + 2), "#" + std::to_string(task.id) + ", " + format_us(*task.duration_us) + " us");
    }
    render_if_graphviz(result.text, std::string("example_") + std::to_string(trace.tasks.size()));
  }
}

TEST(Dot, InceptionNamesAreShortened) {
  const trace::Trace trace = load_example("inception_block.json");
  const DotFile dot = parse_dot(export_dot(trace).text);
  ASSERT_TRUE(dot.ok) << dot.error;
  EXPECT_EQ(dot.nodes.at("t3").attributes.at("label"), "vectorized_elementwise_kernel<...>\\n#3, 1.5 us");
  EXPECT_EQ(dot.nodes.at("t2").attributes.at("label"), "bn_fw_inf_1C11_kernel_NCHW<...>\\n#2, 1.8 us");
  EXPECT_EQ(dot.nodes.at("t1").attributes.at("label"),
            "sm90_xmma_fprop_implicit...nel__5x_cudnn\\n#1, 7.9 us");
  EXPECT_EQ(dot.nodes.at("t0").attributes.at("label"), "memcpy HtoD\\n#0, 58.3 us");
  // The full name is in the tooltip.
  EXPECT_NE(dot.nodes.at("t3").attributes.at("tooltip").find("void at::native::vectorized_elementwise_kernel<4"),
            std::string::npos);
  // Unscheduled: boxed by program stream.
  EXPECT_EQ(dot.clusters.size(), 4u);
  EXPECT_EQ(dot.clusters.at("cluster_1").at("label"), "program stream 1");
  EXPECT_EQ(dot.nodes.at("t4").cluster, "cluster_1");
}

TEST(Dot, ScheduledTraceIsBoxedByScheduleStreamAndWaitsAreRed) {
  trace::Trace trace = load_example("tiny_scheduled.json");
  trace.schedule->extra["stream_priorities"] = {0, 1, 1};
  const DotFile dot = export_and_check(trace);
  const DotExport result = export_dot(trace);
  EXPECT_EQ(result.grouping, "schedule stream");
  EXPECT_EQ(result.clusters, 3u);
  EXPECT_EQ(result.wait_edges, 2u);
  EXPECT_EQ(dot.clusters.at("cluster_1").at("label"), "schedule stream 1 (priority 1)");
  for (const auto& task : trace.tasks) {
    EXPECT_EQ(dot.nodes.at(node(task.id)).cluster, "cluster_" + std::to_string(task.schedule->stream));
  }
  std::set<std::pair<std::string, std::string>> red;
  for (const auto& e : dot.edges) {
    if (e.attributes.count("color") && e.attributes.at("color") == "red3") red.emplace(e.from, e.to);
  }
  EXPECT_EQ(red, (std::set<std::pair<std::string, std::string>>{{"t1", "t4"}, {"t2", "t4"}}));

  DotOptions flat;
  flat.clusters = false;
  const DotFile no_boxes = export_and_check(trace, flat);
  EXPECT_TRUE(no_boxes.clusters.empty());
}

TEST(Dot, HostileNamesAreEscaped) {
  trace::Trace trace;
  trace.tasks = {make_task(0, {}, 1.5, 0), make_task(1, {0}, std::nullopt, 0, "weird \"kind\"\n<x>"),
                 make_task(2, {1}, 2.0, 1)};
  trace.tasks[0].extra["name"] = "say \"hi\"\nthen\\leave <now> {a|b} \\\"";
  trace.tasks[1].extra["dep_reasons"] = {{"0", "quote \" back \\ newline \n end"}};
  trace.tasks[2].extra["name"] = "\\";
  trace.tasks[2].extra["library_call"] = "lib\"call\\";
  DotOptions options;
  options.source = "dir with \"quotes\"\\and\nnewline.json";
  const DotFile dot = export_and_check(trace, options);
  ASSERT_TRUE(dot.ok);
  // Labels are one line of name (newlines became spaces) and one of id and duration; quotes and
  // backslashes round-trip; the tooltip keeps the newline as DOT's \n escape.
  const std::string label = dot.nodes.at("t0").attributes.at("label");
  EXPECT_EQ(label, "say \"hi\" then\\leave <now> {a|b} \\\"\\n#0, 1.5 us");
  EXPECT_NE(dot.nodes.at("t0").attributes.at("tooltip").find("say \"hi\"\\nthen\\leave"), std::string::npos);
  EXPECT_EQ(dot.edges.at(0).attributes.at("label"), "quote \" back \\ newline \\n end");
  EXPECT_NE(dot.nodes.at("t1").attributes.at("label").find("weird \"kind\" <x>"), std::string::npos);
  EXPECT_NE(dot.nodes.at("t1").attributes.at("label").find("duration unknown"), std::string::npos);
  EXPECT_EQ(dot.nodes.at("t2").attributes.at("label"), "\\\\n#2, 2 us");
  render_if_graphviz(export_dot(trace, options).text, "hostile");
}

TEST(Dot, NegativeAndLargeIdsAndEmptyTrace) {
  trace::Trace trace;
  trace.tasks = {make_task(-5, {}, 1.0), make_task(9007199254740993LL, {-5}, 1.0)};
  const DotFile dot = export_and_check(trace);
  EXPECT_TRUE(dot.nodes.count("t-5"));
  EXPECT_TRUE(dot.nodes.count("t9007199254740993"));
  render_if_graphviz(export_dot(trace).text, "ids");

  const DotFile empty = export_and_check(trace::Trace{});
  EXPECT_TRUE(empty.nodes.empty());
  EXPECT_TRUE(empty.edges.empty());
}

TEST(Dot, ParserCatchesBrokenFiles) {
  // The checks above are only as good as the reader: make sure it rejects what dot would.
  EXPECT_FALSE(parse_dot("digraph \"x\" { \"a\" -> \"b\";").ok);           // unbalanced
  EXPECT_FALSE(parse_dot("digraph \"x\" { \"a [label=\"q\"]; }").ok);      // quote not closed right
  EXPECT_FALSE(parse_dot("digraph \"x\" { \"a\" [label=\"x\ny\"]; }").ok);  // raw newline in string
  EXPECT_FALSE(parse_dot("digraph \"x\" { } }").ok);
  EXPECT_TRUE(parse_dot("digraph \"x\" { \"a\" [label=\"x\\\"y\"]; \"a\" -> \"b\"; }").ok);
}

}  // namespace
}  // namespace nimble::exporter
