// A trace's dependency DAG as Graphviz DOT, with the edges that remain after transitive reduction
// (scheduler::redundant_edges): an edge implied by a longer path is left out. Render with
// `dot -Tsvg out.dot -o out.svg`. See docs/export.md.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "nimble/trace/trace.hpp"

namespace nimble::exporter {

struct DotOptions {
  std::size_t max_name_length = 40;  // node labels; the full name is the node's tooltip
  // Group nodes in clusters: by schedule stream in a scheduled trace, otherwise by program stream.
  bool clusters = true;
  std::string source;                // the input's name, shown in the graph label ("" = not shown)
};

struct DotExport {
  std::string text;               // the DOT document, ending in a newline
  std::size_t nodes = 0;          // one per task
  std::size_t edges = 0;          // distinct dependencies in the trace
  std::size_t reduced_edges = 0;  // edges drawn (after transitive reduction)
  std::size_t wait_edges = 0;     // drawn edges that are a wait of the stored schedule (red)
  std::size_t clusters = 0;
  std::string grouping;           // "schedule stream", "program stream" or "none"
};

// Deterministic. The trace should have passed validation; otherwise std::invalid_argument from
// the scheduler's graph functions propagates.
DotExport export_dot(const trace::Trace& trace, const DotOptions& options = {});

// A DOT double-quoted string for any text: quotes and backslashes escaped, line breaks as the
// centred-line escape \n, other control characters as spaces. The result is safe as an ID,
// a label, a tooltip or a cluster title.
std::string dot_quote(std::string_view text);

// The fill colour of a node of this kind (X11 colour name; unknown kinds get a stable colour).
std::string kind_color(std::string_view kind);

}  // namespace nimble::exporter
