// libnimble_graph.so's C API against the fake driver: marks during a stream capture, then the
// captured chain's edges replaced by the dependencies of the marked operations' tensors.
#include "nimble/nimble_graph.h"

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

extern "C" CUfunction fake_driver_function(const char* which);

namespace {

struct Captured {
  CUgraph graph = nullptr;
  std::vector<CUgraphNode> nodes;
};

std::set<std::pair<CUgraphNode, CUgraphNode>> edges_of(CUgraph g) {
  size_t n = 0;
  EXPECT_EQ(cuGraphGetEdges_v2(g, nullptr, nullptr, nullptr, &n), CUDA_SUCCESS);
  std::vector<CUgraphNode> from(n), to(n);
  if (n) {
    EXPECT_EQ(cuGraphGetEdges_v2(g, from.data(), to.data(), nullptr, &n), CUDA_SUCCESS);
  }
  std::set<std::pair<CUgraphNode, CUgraphNode>> out;
  for (size_t i = 0; i < n; ++i) out.insert({from[i], to[i]});
  return out;
}

class GraphRewire : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NIMBLE_LIBCUDA", NIMBLE_TEST_FAKE_DRIVER, 1);
    setenv("FAKE_DRIVER_GRAPHS", "1", 1);
    char error[256] = {};
    session_ = nimble_graph_session_new(error, sizeof error);
    ASSERT_NE(session_, nullptr) << error;
    for (CUdeviceptr* p : {&x_, &y_, &z_, &w_}) ASSERT_EQ(cuMemAlloc_v2(p, 4096), CUDA_SUCCESS);
    ASSERT_EQ(cuStreamCreate(&stream_, 0), CUDA_SUCCESS);
  }
  void TearDown() override { nimble_graph_session_free(session_); }

  void launch_scale(CUdeviceptr in, CUdeviceptr out) {
    int n = 1024;
    void* params[] = {&in, &out, &n};
    ASSERT_EQ(cuLaunchKernel(fake_driver_function("scale"), 1, 1, 1, 1, 1, 1, 0, stream_, params, nullptr),
              CUDA_SUCCESS);
  }
  // One operation: reads `in`, writes `out` (as the Python side marks it after the operation ran).
  int mark(std::vector<std::pair<CUdeviceptr, bool>> tensors) {
    std::vector<uint64_t> addrs, sizes;
    std::vector<uint8_t> written;
    for (auto [p, w] : tensors) addrs.push_back(p), sizes.push_back(4096), written.push_back(w);
    char error[256] = {};
    const int r = nimble_graph_mark(session_, reinterpret_cast<uint64_t>(stream_), tensors.size(), addrs.data(),
                                    sizes.data(), written.data(), error, sizeof error);
    EXPECT_GE(r, 0) << error;
    return r;
  }
  // x -> y (marked), x -> z (marked), y -> w (not marked: whole allocations).
  Captured capture_three() {
    Captured c;
    EXPECT_EQ(cuStreamBeginCapture_v2(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    mark({});
    launch_scale(x_, y_);
    EXPECT_EQ(mark({{x_, false}, {y_, true}}), 1);
    launch_scale(x_, z_);
    EXPECT_EQ(mark({{x_, false}, {z_, true}}), 1);
    EXPECT_EQ(mark({{x_, false}}), 0);  // an operation that captured nothing
    launch_scale(y_, w_);
    EXPECT_EQ(cuStreamEndCapture(stream_, &c.graph), CUDA_SUCCESS);
    size_t n = 0;
    cuGraphGetNodes(c.graph, nullptr, &n);
    c.nodes.resize(n);
    cuGraphGetNodes(c.graph, c.nodes.data(), &n);
    return c;
  }
  std::string rewire(CUgraph g, const char* wiring, int expect = 0) {
    char report[4096] = {};
    EXPECT_EQ(nimble_graph_rewire(session_, reinterpret_cast<uint64_t>(g), wiring, report, sizeof report), expect)
        << report;
    return report;
  }

  nimble_graph_session* session_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr x_ = 0, y_ = 0, z_ = 0, w_ = 0;
};

}  // namespace

TEST_F(GraphRewire, TheCapturedChainBecomesTheMemoryDependencies) {
  const Captured c = capture_three();
  ASSERT_EQ(c.nodes.size(), 3u);
  EXPECT_EQ(edges_of(c.graph).size(), 2u);  // the capture: a chain
  const std::string report = rewire(c.graph, "reduced");
  // Both marked kernels only read x: unordered. The unmarked one touches all of y: after the first.
  EXPECT_EQ(edges_of(c.graph), (std::set<std::pair<CUgraphNode, CUgraphNode>>{{c.nodes[0], c.nodes[2]}}));
  EXPECT_NE(report.find("\"pointers_in_operation_tensors\":4"), std::string::npos) << report;
  EXPECT_NE(report.find("\"pointers_whole_allocation\":2"), std::string::npos) << report;
  EXPECT_NE(report.find("\"kernels_without_operation\":1"), std::string::npos) << report;
}

TEST_F(GraphRewire, RewiringAgainReplacesTheEdgesAgain) {
  const Captured c = capture_three();
  rewire(c.graph, "reduced");
  rewire(c.graph, "chain");
  EXPECT_EQ(edges_of(c.graph), (std::set<std::pair<CUgraphNode, CUgraphNode>>{{c.nodes[0], c.nodes[1]},
                                                                                {c.nodes[1], c.nodes[2]}}));
}

TEST_F(GraphRewire, BadInputIsAnErrorThatSaysSo) {
  const Captured c = capture_three();
  EXPECT_NE(rewire(c.graph, "fastest", -1).find("unknown wiring 'fastest'"), std::string::npos);
  EXPECT_EQ(edges_of(c.graph).size(), 2u);  // untouched
  CUgraph empty = nullptr;
  ASSERT_EQ(cuGraphCreate(&empty, 0), CUDA_SUCCESS);
  EXPECT_NE(rewire(empty, "reduced", -1).find("no nodes"), std::string::npos);
  char error[256] = {};
  EXPECT_EQ(nimble_graph_mark(session_, reinterpret_cast<uint64_t>(stream_), 0, nullptr, nullptr, nullptr, error,
                              sizeof error),
            -1);
  EXPECT_NE(std::string(error).find("not being captured"), std::string::npos) << error;
}

TEST(GraphRewireSession, AMissingDriverIsAClearError) {
  setenv("NIMBLE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  char error[256] = {};
  EXPECT_EQ(nimble_graph_session_new(error, sizeof error), nullptr);
  EXPECT_NE(std::string(error).find("cannot load the CUDA driver"), std::string::npos) << error;
}
