// Would device-side node updates make replay pay for programs whose buffers drift? (Most real
// training scripts call zero_grad(set_to_none=True) between forward and backward: the gradients
// land at new addresses every step, and nimble run drops the recording because rewriting most of
// its nodes from the host costs what replay saves.)
//
// G graphs of K kernels, every kernel's pointer argument new in every iteration (as drift does),
// three ways, alternating in rounds, host time per iteration:
//   eager    every kernel launched by the program (what nimble run leaves after a drop)
//   host     every node rewritten with cuGraphExecKernelNodeSetParams, then the graphs launched
//   device   the nodes opted in as device-updatable (CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE);
//            the host writes the new pointers into pinned memory and one kernel of one thread
//            applies them all (cudaGraphKernelNodeUpdatesApply) before the graphs launch, in stream
//            order. Its two update lists keep the host at most two iterations ahead, so this mode's
//            time is the apply kernel's on the GPU (one thread per update was not tried).
//   whole    every node's new parameters set in the graph itself (cuGraphKernelNodeSetParams, host
//            memory only), then each exec brought to its graph at once (cuGraphExecUpdate) and launched
//   host2    as host, with two execs of each graph used in turn: the exec written was launched two
//            iterations ago, not one (is writing an exec whose launch may still run what costs more?)
// (Host mode asks each node's parameters, cuGraphKernelNodeGetParams, every time: nimble asks once.)
// Each way's results are checked against the host's sum of what every kernel added.
//   nvcc -O2 -rdc=true -arch=sm_90 -DPAD_BYTES=8 -o duc device_update_cost.cu -lcuda -lcudadevrt
//   ./duc [G K ITERS SPIN_CYCLES]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// A PyTorch elementwise kernel passes a few hundred bytes (TensorIterator's offset calculators):
// `pad` makes each launch's parameter buffer that long; `spin` keeps the GPU busy that many cycles
// per kernel, so the host runs ahead and updates execs whose last launch has not run yet.
#ifndef PAD_BYTES
#define PAD_BYTES 8
#endif
struct Pad {
  char bytes[PAD_BYTES];
};
// The kernel's parameters as the driver lays them out (its parameter buffer's size).
struct Params {
  float* p;
  float v;
  Pad pad;
  long long spin;
};
__global__ void add(float* p, float v, Pad pad, long long spin) {
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  p[threadIdx.x] += v + pad.bytes[0];
}

__global__ void apply(const cudaGraphKernelNodeUpdate* updates, size_t n, int* status) {
  const cudaError_t e = cudaGraphKernelNodeUpdatesApply(updates, n);
  if (e != cudaSuccess) *status = static_cast<int>(e);
}

#define CHECK(x)                                                                   \
  do {                                                                             \
    CUresult r_ = (x);                                                             \
    if (r_ != CUDA_SUCCESS) {                                                      \
      const char* s_ = nullptr;                                                    \
      cuGetErrorString(r_, &s_);                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)
#define CHECK_RT(x)                                                                        \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

static long long g_spin = 0;

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Graphs {
  std::vector<CUgraph> graphs;
  std::vector<CUgraphExec> execs;
  std::vector<std::vector<CUgraphNode>> nodes;
  std::vector<cudaGraphDeviceNode_t> dev_nodes;  // device mode: every kernel node's, in order
};

// `slots` places of 32 floats; kernel j of iteration i writes slot (i * 7919 + j * 31) % slots:
// every pointer moves each iteration, like a drifting allocator's.
static float* slot(float* buf, int slots, long i, long j) { return buf + ((i * 7919 + j * 31) % slots) * 32; }

static Graphs build(cudaStream_t s, float* buf, int slots, int g, int k, bool device_updatable) {
  Graphs out;
  for (int a = 0; a < g; ++a) {
    CHECK_RT(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    for (int b = 0; b < k; ++b) add<<<1, 32, 0, s>>>(slot(buf, slots, 0, a * k + b), 1.0f, Pad{}, g_spin);
    CUgraph graph;
    CHECK_RT(cudaStreamEndCapture(s, reinterpret_cast<cudaGraph_t*>(&graph)));
    // Captured kernels in stream order: the graph is a chain, walk it from its root.
    std::vector<CUgraphNode> chain;
    size_t n = 0;
    CHECK(cuGraphGetRootNodes(graph, nullptr, &n));
    std::vector<CUgraphNode> roots(n);
    CHECK(cuGraphGetRootNodes(graph, roots.data(), &n));
    CUgraphNode node = roots.at(0);
    while (true) {
      chain.push_back(node);
      size_t m = 0;
      CHECK(cuGraphNodeGetDependentNodes(node, nullptr, nullptr, &m));
      if (m == 0) break;
      std::vector<CUgraphNode> next(m);
      CHECK(cuGraphNodeGetDependentNodes(node, next.data(), nullptr, &m));
      node = next[0];
    }
    if (static_cast<int>(chain.size()) != k) {
      std::fprintf(stderr, "graph %d: %zu nodes in its chain, %d kernels captured\n", a, chain.size(), k);
      std::exit(1);
    }
    if (device_updatable) {
      for (CUgraphNode nd : chain) {
        CUkernelNodeAttrValue v;
        std::memset(&v, 0, sizeof v);
        v.deviceUpdatableKernelNode.deviceUpdatable = 1;
        CHECK(cuGraphKernelNodeSetAttribute(nd, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &v));
        CUkernelNodeAttrValue back;
        std::memset(&back, 0, sizeof back);
        CHECK(cuGraphKernelNodeGetAttribute(nd, CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE, &back));
        out.dev_nodes.push_back(reinterpret_cast<cudaGraphDeviceNode_t>(back.deviceUpdatableKernelNode.devNode));
      }
    }
    CUgraphExec exec;
    CHECK(cuGraphInstantiate(&exec, graph, 0));
    if (device_updatable) CHECK(cuGraphUpload(exec, reinterpret_cast<CUstream>(s)));
    out.graphs.push_back(graph);
    out.execs.push_back(exec);
    out.nodes.push_back(chain);
  }
  return out;
}

int main(int argc, char** argv) {
  const int G = argc > 1 ? std::atoi(argv[1]) : 40;
  const int K = argc > 2 ? std::atoi(argv[2]) : 16;
  const int ITERS = argc > 3 ? std::atoi(argv[3]) : 200;
  g_spin = argc > 4 ? std::atoll(argv[4]) : 0;
  const int ROUNDS = 5;
  const int N = G * K;
  const int slots = 4 * N + 17;
  CHECK_RT(cudaSetDevice(0));
  CHECK_RT(cudaFree(nullptr));
  cudaDeviceProp prop;
  CHECK_RT(cudaGetDeviceProperties(&prop, 0));
  int driver = 0;
  cuDriverGetVersion(&driver);
  std::printf("device %s, driver %d, %d graphs of %d kernels (%d nodes), %d parameter bytes, %lld cycles each, %d iterations x %d rounds\n",
              prop.name, driver, G, K, N, static_cast<int>(sizeof(Params)), g_spin, ITERS, ROUNDS);
  cudaStream_t s;
  CHECK_RT(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float* buf[5];
  for (auto& b : buf) {
    CHECK_RT(cudaMalloc(&b, sizeof(float) * 32 * slots));
    CHECK_RT(cudaMemset(b, 0, sizeof(float) * 32 * slots));
  }
  Graphs host = build(s, buf[1], slots, G, K, false);
  Graphs dev = build(s, buf[2], slots, G, K, true);
  Graphs whole = build(s, buf[3], slots, G, K, false);
  Graphs twice = build(s, buf[4], slots, G, K, false);
  std::vector<CUgraphExec> second(G);  // twice's other exec of each graph
  for (int a = 0; a < G; ++a) CHECK(cuGraphInstantiate(&second[a], twice.graphs[a], 0));

  // Device mode's update list: two halves (iterations alternate), each N updates and N pointers,
  // in pinned memory the apply kernel reads; an event per half says when it was read.
  cudaGraphKernelNodeUpdate* updates = nullptr;
  void** values = nullptr;
  int* status = nullptr;
  CHECK_RT(cudaHostAlloc(&updates, sizeof(cudaGraphKernelNodeUpdate) * 2 * N, cudaHostAllocMapped));
  CHECK_RT(cudaHostAlloc(&values, sizeof(void*) * 2 * N, cudaHostAllocMapped));
  CHECK_RT(cudaHostAlloc(&status, sizeof(int), cudaHostAllocMapped));
  *status = 0;
  for (int h = 0; h < 2; ++h) {
    for (int j = 0; j < N; ++j) {
      cudaGraphKernelNodeUpdate& u = updates[h * N + j];
      std::memset(&u, 0, sizeof u);
      u.node = dev.dev_nodes[j];
      u.field = cudaGraphKernelNodeFieldParam;
      u.updateData.param.pValue = &values[h * N + j];
      u.updateData.param.offset = 0;
      u.updateData.param.size = sizeof(void*);
    }
  }
  cudaEvent_t half_read[2];
  for (auto& e : half_read) CHECK_RT(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  for (auto& e : half_read) CHECK_RT(cudaEventRecord(e, s));

  long iteration[5] = {1, 1, 1, 1, 1};  // iteration 0 is the captured one
  auto eager = [&](long i) {
    for (int j = 0; j < N; ++j) add<<<1, 32, 0, s>>>(slot(buf[0], slots, i, j), 1.0f, Pad{}, g_spin);
  };
  // Node (a, b) of `g` with iteration i's pointer into `out`, handed to `set` (its arguments live
  // until `set` returns).
  auto with_new_params = [&](const Graphs& g, float* out, long i, int a, int b, auto&& set) {
    float* p = slot(out, slots, i, a * K + b);
    float v = 1.0f;
    Pad pad{};
    void* args[] = {&p, &v, &pad, &g_spin};
    CUDA_KERNEL_NODE_PARAMS params;
    std::memset(&params, 0, sizeof params);
    CHECK(cuGraphKernelNodeGetParams(g.nodes[a][b], &params));
    params.kernelParams = args;
    params.extra = nullptr;
    set(params);
  };
  auto host_update = [&](long i, const Graphs& host, float* out, const std::vector<CUgraphExec>& execs) {
    for (int a = 0; a < G; ++a) {
      for (int b = 0; b < K; ++b) {
        with_new_params(host, out, i, a, b, [&](CUDA_KERNEL_NODE_PARAMS& params) {
          CHECK(cuGraphExecKernelNodeSetParams(execs[a], host.nodes[a][b], &params));
        });
      }
      CHECK(cuGraphLaunch(execs[a], reinterpret_cast<CUstream>(s)));
    }
  };
  auto whole_update = [&](long i) {
    for (int a = 0; a < G; ++a) {
      for (int b = 0; b < K; ++b) {
        with_new_params(whole, buf[3], i, a, b, [&](CUDA_KERNEL_NODE_PARAMS& params) {
          CHECK(cuGraphKernelNodeSetParams(whole.nodes[a][b], &params));
        });
      }
      CUgraphExecUpdateResultInfo info;
      CHECK(cuGraphExecUpdate(whole.execs[a], whole.graphs[a], &info));
      CHECK(cuGraphLaunch(whole.execs[a], reinterpret_cast<CUstream>(s)));
    }
  };
  auto device_update = [&](long i) {
    const int h = static_cast<int>(i & 1);
    CHECK_RT(cudaEventSynchronize(half_read[h]));  // the apply kernel two iterations ago read this half
    for (int j = 0; j < N; ++j) values[h * N + j] = slot(buf[2], slots, i, j);
    apply<<<1, 1, 0, s>>>(&updates[h * N], N, status);
    CHECK_RT(cudaEventRecord(half_read[h], s));
    for (int a = 0; a < G; ++a) CHECK(cuGraphLaunch(dev.execs[a], reinterpret_cast<CUstream>(s)));
  };
  // Iteration 0 as captured, for the graph modes (their graphs hold iteration 0's pointers).
  for (int a = 0; a < G; ++a) CHECK(cuGraphLaunch(host.execs[a], reinterpret_cast<CUstream>(s)));
  for (int a = 0; a < G; ++a) CHECK(cuGraphLaunch(dev.execs[a], reinterpret_cast<CUstream>(s)));
  for (int a = 0; a < G; ++a) CHECK(cuGraphLaunch(whole.execs[a], reinterpret_cast<CUstream>(s)));
  for (int a = 0; a < G; ++a) CHECK(cuGraphLaunch(twice.execs[a], reinterpret_cast<CUstream>(s)));
  eager(0);
  CHECK_RT(cudaStreamSynchronize(s));

  const char* names[5] = {"eager", "host", "device", "whole", "host2"};
  std::vector<double> per_iter[5];
  for (int r = 0; r < ROUNDS; ++r) {
    for (int m = 0; m < 5; ++m) {
      const double t0 = now_us();
      for (int it = 0; it < ITERS; ++it) {
        const long i = iteration[m]++;
        if (m == 0) eager(i);
        if (m == 1) host_update(i, host, buf[1], host.execs);
        if (m == 2) device_update(i);
        if (m == 3) whole_update(i);
        if (m == 4) host_update(i, twice, buf[4], i % 2 ? second : twice.execs);
      }
      const double host_us = (now_us() - t0) / ITERS;
      CHECK_RT(cudaStreamSynchronize(s));
      const double all_us = (now_us() - t0) / ITERS;
      per_iter[m].push_back(host_us);
      std::printf("round %d %-6s host %8.1f us/iteration (%.2f us/kernel), until done %8.1f us/iteration\n", r,
                  names[m], host_us, host_us / N, all_us);
    }
  }
  if (*status != 0) {
    std::printf("device mode: cudaGraphKernelNodeUpdatesApply failed: %s\n",
                cudaGetErrorString(static_cast<cudaError_t>(*status)));
  }
  // Results: every mode must have added 1 at each slot its kernels named, iteration by iteration.
  std::vector<float> expect(static_cast<size_t>(32) * slots, 0.0f), got(expect.size());
  bool all_ok = *status == 0;
  for (int m = 0; m < 5; ++m) {
    std::fill(expect.begin(), expect.end(), 0.0f);
    for (long i = 0; i < iteration[m]; ++i)
      for (int j = 0; j < N; ++j) {
        const long sl = (i * 7919 + j * 31) % slots;
        for (int t = 0; t < 32; ++t) expect[sl * 32 + t] += 1.0f;
      }
    CHECK_RT(cudaMemcpy(got.data(), buf[m], sizeof(float) * got.size(), cudaMemcpyDeviceToHost));
    long wrong = 0;
    for (size_t x = 0; x < got.size(); ++x) wrong += got[x] != expect[x];
    std::printf("%-6s results %s (%ld of %zu floats differ)\n", names[m], wrong ? "WRONG" : "right", wrong, got.size());
    all_ok = all_ok && wrong == 0;
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double e = median(per_iter[0]), h = median(per_iter[1]), d = median(per_iter[2]), w = median(per_iter[3]),
               h2 = median(per_iter[4]);
  std::printf("median host us/iteration: eager %.1f, host updates %.1f (%.2fx eager), device updates %.1f (%.2fx eager), "
              "whole-exec updates %.1f (%.2fx eager), host updates to two execs in turn %.1f (%.2fx eager)\n", e, h,
              e / h, d, e / d, w, e / w, h2, e / h2);
  return all_ok ? 0 : 1;
}
