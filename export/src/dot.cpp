#include "nimble/export/dot.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "nimble/export/names.hpp"
#include "nimble/export/plan.hpp"
#include "nimble/scheduler/reduction.hpp"
#include "nimble/scheduler/trace_schedule.hpp"

namespace nimble::exporter {
namespace {

std::string node_id(const trace::Task& task) { return dot_quote("t" + std::to_string(task.id)); }

std::optional<std::string> string_field(const trace::json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// Why task `to` depends on task `from`: its dep_reasons entry, if any.
std::optional<std::string> reason(const trace::Task& to, const trace::Task& from) {
  const auto reasons = to.extra.find("dep_reasons");
  if (reasons == to.extra.end() || !reasons->is_object()) return std::nullopt;
  return string_field(*reasons, std::to_string(from.id).c_str());
}

std::string node_statement(const trace::Task& task, const DotOptions& options) {
  const bool named = !full_task_name(task).empty();
  std::string label = display_name(task, options.max_name_length, /*with_id=*/false);
  label += "\n#" + std::to_string(task.id) + ", ";
  label += task.duration_us ? format_us(*task.duration_us) + " us" : std::string("duration unknown");

  std::string tooltip = named ? full_task_name(task) + "\n" : std::string();
  tooltip += task.kind + " #" + std::to_string(task.id);
  if (task.stream) tooltip += ", program stream " + std::to_string(*task.stream);
  if (task.schedule) tooltip += ", schedule stream " + std::to_string(task.schedule->stream);
  if (auto api = string_field(task.extra, "api")) tooltip += "\napi " + *api;
  if (auto call = string_field(task.extra, "library_call")) tooltip += "\nlibrary call " + *call;

  return node_id(task) + " [label=" + dot_quote(label) + ", fillcolor=" + dot_quote(kind_color(task.kind)) +
         ", tooltip=" + dot_quote(tooltip) + "];";
}

std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t hash = 2166136261u;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return hash;
}

}  // namespace

std::string dot_quote(std::string_view text) {
  std::string out = "\"";
  out.reserve(text.size() + 2);
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      continue;
    } else if (u < 0x20 || u == 0x7f) {
      out += ' ';
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string kind_color(std::string_view kind) {
  static const std::map<std::string, std::string, std::less<>> known = {
      {"kernel", "lightskyblue"}, {"memcpy", "navajowhite"}, {"memset", "pink"},
      {"sync", "lightgray"},      {"graph", "thistle"},
  };
  if (const auto it = known.find(kind); it != known.end()) return it->second;
  static const char* const others[] = {"palegreen", "khaki", "lightcyan", "wheat", "plum", "lightsalmon",
                                       "aquamarine", "bisque"};
  return others[fnv1a(kind) % (sizeof others / sizeof others[0])];
}

DotExport export_dot(const trace::Trace& trace, const DotOptions& options) {
  DotExport out;
  const std::size_t n = trace.tasks.size();
  out.nodes = n;

  const scheduler::Dag dag = scheduler::dag_from_trace(trace);
  const scheduler::Adjacency predecessors = scheduler::predecessor_adjacency(dag);
  const std::vector<std::uint8_t> redundant = scheduler::redundant_edges(predecessors);
  out.edges = predecessors.edges();

  // Waits of the stored schedule, to colour the edges they enforce.
  std::optional<ScheduleView> plan;
  if (trace.schedule) plan = make_plan(trace);

  // Clusters: schedule streams, else program streams; key -1 = outside any cluster.
  std::map<std::int64_t, std::vector<std::size_t>> groups;
  std::map<std::int64_t, std::string> group_titles;
  out.grouping = "none";
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t key = -1;
    if (options.clusters && plan) {
      key = plan->stream_of[i];
      group_titles[key] = "schedule " + plan_lane_name(*plan, plan->stream_of[i]);
      out.grouping = "schedule stream";
    } else if (options.clusters && trace.tasks[i].stream && *trace.tasks[i].stream >= 0) {
      key = *trace.tasks[i].stream;
      group_titles[key] = "program stream " + std::to_string(key);
      out.grouping = "program stream";
    }
    groups[key].push_back(i);
  }

  // Edges first: the graph's title counts them.
  std::string edge_text;
  std::size_t edge = 0;
  for (scheduler::NodeIndex v = 0; v < n; ++v) {
    for (scheduler::NodeIndex u : predecessors[v]) {
      const bool implied = redundant[edge++] != 0;
      if (implied) continue;
      ++out.reduced_edges;
      const trace::Task& from = trace.tasks[u];
      const trace::Task& to = trace.tasks[v];
      std::vector<std::string> attributes;
      if (auto why = reason(to, from)) attributes.push_back("label=" + dot_quote(*why));
      if (plan && std::find(plan->waits[v].begin(), plan->waits[v].end(), u) != plan->waits[v].end()) {
        ++out.wait_edges;
        attributes.push_back("color=\"red3\"");
        attributes.push_back("penwidth=1.5");
      }
      edge_text += "  " + node_id(from) + " -> " + node_id(to);
      if (!attributes.empty()) {
        edge_text += " [";
        for (std::size_t a = 0; a < attributes.size(); ++a) edge_text += (a ? ", " : "") + attributes[a];
        edge_text += "]";
      }
      edge_text += ";\n";
    }
  }

  std::set<std::string> kinds_seen;
  for (const auto& task : trace.tasks) kinds_seen.insert(task.kind);
  std::string colours;
  for (const auto& kind : kinds_seen) colours += (colours.empty() ? "" : ", ") + kind + " " + kind_color(kind);
  std::string title = "nimble dependency DAG";
  if (!options.source.empty()) title += " of " + options.source;
  title += "\n" + std::to_string(n) + " tasks, " + std::to_string(out.edges) + " dependencies, " +
           std::to_string(out.reduced_edges) + " edges after transitive reduction";
  if (out.grouping != "none") title += "; boxes: " + out.grouping + "s";
  if (plan) title += "; red edges: waits of the schedule";
  if (!colours.empty()) title += "\nfill: " + colours;

  std::string text;
  text += "digraph \"nimble\" {\n";
  text += "  graph [label=" + dot_quote(title) + ", labelloc=t, fontname=\"Helvetica\", rankdir=TB];\n";
  text += "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n";
  text += "  edge [fontname=\"Helvetica\", fontsize=8, color=\"gray40\", fontcolor=\"gray25\"];\n";
  for (const auto& [key, members] : groups) {
    if (key < 0) continue;
    ++out.clusters;
    text += "  subgraph " + dot_quote("cluster_" + std::to_string(key)) + " {\n";
    text += "    label=" + dot_quote(group_titles[key]) + ";\n";
    text += "    style=\"rounded\"; color=\"gray60\"; fontname=\"Helvetica\";\n";
    for (std::size_t i : members) text += "    " + node_statement(trace.tasks[i], options) + "\n";
    text += "  }\n";
  }
  if (const auto loose = groups.find(-1); loose != groups.end()) {
    for (std::size_t i : loose->second) text += "  " + node_statement(trace.tasks[i], options) + "\n";
  }
  text += edge_text;
  text += "}\n";
  out.text = std::move(text);
  return out;
}

}  // namespace nimble::exporter
