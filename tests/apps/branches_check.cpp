// Checks a trace recorded from tests/apps/branches.cu: after transitive reduction its DAG must be
// exactly the program's known graph, and every kernel CUPTI counted must be in it.
// Usage: branches_check TRACE.json      Exit status 0 when it matches, 1 otherwise.
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nimble/trace/io.hpp"

namespace {

using nimble::trace::Task;

// A readable label per task: the kernel's name, or the copy direction, or the kind.
std::string label(const Task& t) {
  if (t.kind == "kernel") {
    const std::string name = t.extra.value("name", std::string());
    for (const char* k : {"scale", "fill", "add_one", "join"}) {
      if (name.rfind(k, 0) == 0) return k;
    }
    return "kernel:" + name;
  }
  if (t.kind == "memcpy") {
    const auto dir = t.extra.contains("copy") ? t.extra["copy"].value("direction", std::string()) : "";
    return dir == "HtoD" ? "h2d" : dir == "DtoH" ? "d2h" : "memcpy:" + dir;
  }
  return t.kind;  // memset, sync
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: branches_check TRACE.json\n");
    return 2;
  }
  const auto loaded = nimble::trace::load_trace(argv[1]);
  std::fputs(loaded.diagnostics.format(argv[1]).c_str(), stderr);
  if (!loaded.trace) return 1;
  const auto& tasks = loaded.trace->tasks;

  std::map<nimble::trace::TaskId, std::size_t> index;
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    index[tasks[i].id] = i;
    labels.push_back(label(tasks[i]));
  }
  int failures = 0;
  const std::vector<std::string> expected_tasks = {"h2d", "memset", "scale", "fill", "add_one",
                                                   "join", "d2h", "sync"};
  if (labels != expected_tasks) {
    std::string got;
    for (const auto& l : labels) got += l + " ";
    std::fprintf(stderr, "FAIL: tasks in issue order are [%s]\n", got.c_str());
    ++failures;
  }

  // Transitive reduction: drop u->v when v is reachable from u through another path.
  const std::size_t n = tasks.size();
  std::vector<std::set<std::size_t>> succ(n);
  for (std::size_t v = 0; v < n; ++v) {
    for (auto dep : tasks[v].deps) succ[index.at(dep)].insert(v);
  }
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (std::size_t u = n; u-- > 0;) {  // issue order is topological
    for (auto v : succ[u]) {
      reach[u][v] = true;
      for (std::size_t w = 0; w < n; ++w) if (reach[v][w]) reach[u][w] = true;
    }
  }
  std::set<std::pair<std::string, std::string>> edges;
  for (std::size_t u = 0; u < n; ++u) {
    for (auto v : succ[u]) {
      bool implied = false;
      for (auto w : succ[u]) if (w != v && reach[w][v]) implied = true;
      if (!implied) edges.insert({labels[u], labels[v]});
    }
  }
  const std::set<std::pair<std::string, std::string>> expected_edges = {
      {"h2d", "memset"}, {"memset", "scale"}, {"h2d", "fill"},  {"fill", "add_one"},
      {"add_one", "join"}, {"scale", "join"}, {"join", "d2h"}, {"d2h", "sync"}};
  for (const auto& e : expected_edges) {
    if (!edges.count(e)) {
      std::fprintf(stderr, "FAIL: missing dependency %s -> %s\n", e.first.c_str(), e.second.c_str());
      ++failures;
    }
  }
  for (const auto& e : edges) {
    if (!expected_edges.count(e)) {
      std::fprintf(stderr, "FAIL: extra dependency %s -> %s\n", e.first.c_str(), e.second.c_str());
      ++failures;
    }
  }

  const auto& coverage = loaded.trace->extra.value("coverage", nimble::trace::json::object());
  const auto traced = coverage.value("traced_kernels", -1);
  const auto cupti = coverage.contains("cupti_kernels") && coverage["cupti_kernels"].is_number()
                         ? coverage["cupti_kernels"].get<long>()
                         : -1;
  if (traced != 4 || cupti != traced) {
    std::fprintf(stderr, "FAIL: traced %ld kernels, CUPTI counted %ld, expected 4 and 4 (%s)\n",
                 static_cast<long>(traced), cupti, coverage.dump().c_str());
    ++failures;
  }
  std::printf("branches_check: %zu tasks, %zu edges after reduction, %d problem(s)\n", n, edges.size(),
              failures);
  return failures ? 1 : 0;
}
