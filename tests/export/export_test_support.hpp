// Helpers for the export tests: bundled and synthetic traces, a strict DOT reader, running tools.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nimble/trace/trace.hpp"

namespace nimble::export_test {

// docs/examples/NAME loaded and validated (fails the test when it does not load).
trace::Trace load_example(const std::string& name);
std::string example_path(const std::string& name);

trace::Task make_task(trace::TaskId id, std::vector<trace::TaskId> deps, std::optional<double> duration = std::nullopt,
                      std::optional<int> stream = std::nullopt, const std::string& kind = "kernel");

// a -> b -> c plus the redundant a -> c, each edge with a reason (ids 10, 20, 30).
trace::Trace redundant_edge_trace();

// A DOT file read back by a small strict parser: every quoted string closed, braces and brackets
// balanced, statements well formed. `error` says what is wrong when it is not.
struct DotNode {
  std::map<std::string, std::string> attributes;  // values unescaped (\" -> ", \\ -> \; \n stays "\n")
  std::string cluster;                            // "" outside any cluster
};
struct DotEdge {
  std::string from, to;
  std::map<std::string, std::string> attributes;
};
struct DotFile {
  bool ok = false;
  std::string error;
  std::string graph_name;
  std::map<std::string, DotNode> nodes;
  std::vector<std::string> node_order;
  std::vector<DotEdge> edges;
  std::map<std::string, std::map<std::string, std::string>> clusters;  // name -> attributes
  std::map<std::string, std::string> graph_attributes;
  std::size_t node_statements = 0;  // node statements seen (a repeated node counts twice)
};
DotFile parse_dot(const std::string& text);

// Shell helpers.
bool have_command(const std::string& name);
struct RunResult {
  int status = -1;
  std::string out;
  std::string err;
};
RunResult run_shell(const std::string& command);  // via /bin/sh; stdout and stderr captured apart
std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
std::string shell_quote(const std::string& text);

}  // namespace nimble::export_test
