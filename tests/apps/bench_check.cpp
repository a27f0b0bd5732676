// Checks the results `nimble bench` wrote for tests/apps/branches: every backend ran, each left
// the same bytes as eager replay, and every graph has one node per GPU task of the iteration.
// Usage: bench_check BENCH.json EXPECTED_NODES
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_check BENCH.json EXPECTED_NODES\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  const auto bench = nlohmann::json::parse(in, nullptr, false);
  if (bench.is_discarded()) {
    std::fprintf(stderr, "bench_check: %s is missing or not JSON\n", argv[1]);
    return 1;
  }
  int failures = 0;
  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "bench_check: %s\n", what.c_str());
    ++failures;
  };
  if (bench.contains("error")) fail("bench error: " + bench["error"].dump());
  const std::size_t nodes = std::strtoul(argv[2], nullptr, 10);
  std::set<std::string> seen;
  for (const auto& b : bench.value("backends", nlohmann::json::array())) {
    const std::string name = b.value("backend", "?");
    seen.insert(name);
    if (b.contains("error")) {
      fail(name + " failed: " + b["error"].dump());
      continue;
    }
    if (!(b.value("median_ms", 0.0) > 0)) fail(name + ": no time");
    const std::string check = b.value("memory_check", "");
    if (check != "same bytes" && check != "reference") fail(name + ": memory check says " + check);
    if (name != "eager-replay" && b.value("graph_nodes", std::size_t{0}) != nodes) {
      fail(name + ": " + std::to_string(b.value("graph_nodes", std::size_t{0})) + " graph nodes, expected " +
           std::to_string(nodes));
    }
  }
  for (const char* name : {"eager-replay", "graph-1-stream", "graph-nimble-streams", "graph-from-edges"}) {
    if (!seen.count(name)) fail(std::string("backend ") + name + " missing");
  }
  if (bench.value("saved_bytes", 0) <= 0) fail("no memory was saved");
  if (failures == 0) std::printf("bench_check: ok (%zu backends)\n", seen.size());
  return failures == 0 ? 0 : 1;
}
