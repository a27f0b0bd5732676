#include "nimble/replayer/bench_report.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace nimble::replayer {
namespace {

using trace::json;

std::string fixed(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace

TraceBounds trace_bounds(const trace::Trace& trace) {
  TraceBounds bounds;
  std::map<trace::TaskId, double> finish;
  for (const trace::Task& t : trace.tasks) {
    const double d = t.duration_us.value_or(0.0);
    if (t.duration_us) ++bounds.tasks_with_duration;
    bounds.serial_us += d;
    double start = 0;
    for (trace::TaskId dep : t.deps) {
      auto it = finish.find(dep);
      if (it != finish.end()) start = std::max(start, it->second);
    }
    finish[t.id] = start + d;
    bounds.critical_path_us = std::max(bounds.critical_path_us, start + d);
  }
  return bounds;
}

json bench_to_json(const BenchResult& result, const TraceBounds& bounds, std::optional<double> framework_ms,
                   const json& schedule_summary) {
  json out = {{"framework_ms", framework_ms ? json(*framework_ms) : json(nullptr)},
              {"serial_us", bounds.serial_us},
              {"critical_path_us", bounds.critical_path_us},
              {"tasks_with_duration", bounds.tasks_with_duration},
              {"saved_bytes", result.saved_bytes},
              {"checked_ranges", result.checked_ranges},
              {"nondeterministic_ranges", result.nondeterministic_ranges},
              {"host_functions_skipped", result.host_functions_skipped},
              {"schedule", schedule_summary}};
  if (!result.error.empty()) out["error"] = result.error;
  json backends = json::array();
  for (const BackendResult& b : result.backends) {
    json entry = {{"backend", b.backend}};
    if (b.error.empty()) {
      entry["median_ms"] = b.median_ms;
      entry["p10_ms"] = b.p10_ms;
      entry["p90_ms"] = b.p90_ms;
      if (b.graph_nodes) entry["graph_nodes"] = b.graph_nodes;
      entry["memory_check"] = b.verified;
      if (!b.differing.empty()) {
        json ranges = json::array();
        for (const MemoryRange& r : b.differing) ranges.push_back({{"addr", trace::hex_address(r.addr)}, {"size", r.size}});
        entry["differing_ranges"] = std::move(ranges);
      }
    } else {
      entry["error"] = b.error;
    }
    backends.push_back(std::move(entry));
  }
  out["backends"] = std::move(backends);
  return out;
}

std::string bench_table(const json& bench) {
  std::ostringstream out;
  const json fw = bench.value("framework_ms", json(nullptr));
  double single = 0;
  for (const json& b : bench.value("backends", json::array())) {
    if (b.value("backend", "") == "graph-1-stream" && b.contains("median_ms")) single = b["median_ms"].get<double>();
  }
  char line[256];
  std::snprintf(line, sizeof line, "  %-22s %10s %8s %8s %6s %10s %10s  %s\n", "backend", "median ms", "p10",
                "p90", "nodes", "vs program", "vs 1-strm", "memory check");
  out << line;
  if (fw.is_number()) {
    std::snprintf(line, sizeof line, "  %-22s %10s\n", "program (eager)", fixed(fw.get<double>()).c_str());
    out << line;
  }
  for (const json& b : bench.value("backends", json::array())) {
    const std::string name = b.value("backend", "?");
    if (!b.contains("median_ms")) {
      out << "  " << name << ": FAILED: " << b.value("error", "") << "\n";
      continue;
    }
    const double ms = b["median_ms"].get<double>();
    const std::string vs_fw = fw.is_number() && ms > 0 ? fixed(fw.get<double>() / ms, 2) + "x" : "-";
    const std::string vs_single = single > 0 && ms > 0 ? fixed(single / ms, 2) + "x" : "-";
    std::snprintf(line, sizeof line, "  %-22s %10s %8s %8s %6s %10s %10s  %s\n", name.c_str(), fixed(ms).c_str(),
                  fixed(b.value("p10_ms", 0.0)).c_str(), fixed(b.value("p90_ms", 0.0)).c_str(),
                  b.contains("graph_nodes") ? std::to_string(b["graph_nodes"].get<std::size_t>()).c_str() : "-",
                  vs_fw.c_str(), vs_single.c_str(), b.value("memory_check", "").c_str());
    out << line;
  }
  out << "  sum of task times      " << fixed(bench.value("serial_us", 0.0) / 1000.0)
      << " ms (a single stream cannot beat it)\n";
  out << "  critical path          " << fixed(bench.value("critical_path_us", 0.0) / 1000.0)
      << " ms (no schedule can beat it)\n";
  const std::size_t nondeterministic = bench.value("nondeterministic_ranges", std::size_t{0});
  if (nondeterministic > 0) {
    out << "  memory check           " << nondeterministic << " of " << bench.value("checked_ranges", std::size_t{0})
        << " ranges differ between eager replays themselves (nondeterministic kernels); not compared\n";
  }
  if (const std::size_t host = bench.value("host_functions_skipped", std::size_t{0}); host > 0) {
    out << "  host functions         " << host << " kept in order but not called (they change no device memory "
        << "nimble sees)\n";
  }
  if (bench.contains("error")) out << "  error: " << bench["error"].get<std::string>() << "\n";
  return out.str();
}

std::string beside_trace(const std::string& trace_path, const std::string& what) {
  const std::string suffix = ".json";
  if (trace_path.size() > suffix.size() &&
      trace_path.compare(trace_path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    return trace_path.substr(0, trace_path.size() - suffix.size()) + "." + what + ".json";
  }
  return trace_path + "." + what + ".json";
}

std::string default_bench_path(const std::string& trace_path) { return beside_trace(trace_path, "bench"); }

}  // namespace nimble::replayer
