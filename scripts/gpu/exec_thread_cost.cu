// Whether a CUDA graph exec made on another thread costs more to update and launch from the
// program's thread than one made on that thread (nimble run's NIMBLE_RUN_BACKGROUND builds its
// graphs on a thread of its own). 100 graphs of 16 kernels, each iteration every node's argument
// rewritten and every graph launched; host time per node write and per launch, both kinds
// alternating in rounds. nvcc -O2 -o etc exec_thread_cost.cu -lcuda
#include <cuda.h>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

__global__ void add(float* p, float v) { p[threadIdx.x] += v; }

struct Built {
  std::vector<CUgraphExec> execs;
  std::vector<std::vector<CUgraphNode>> nodes;
};

static Built build(CUcontext ctx, float* buf, int graphs, int per) {
  cuCtxSetCurrent(ctx);
  Built b;
  CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  for (int g = 0; g < graphs; ++g) {
    cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED);
    for (int k = 0; k < per; ++k) add<<<1, 32, 0, (cudaStream_t)s>>>(buf, 1.0f);
    CUgraph graph; cuStreamEndCapture(s, &graph);
    size_t n = 0; cuGraphGetNodes(graph, nullptr, &n);
    std::vector<CUgraphNode> nodes(n); cuGraphGetNodes(graph, nodes.data(), &n);
    CUgraphExec e; cuGraphInstantiate(&e, graph, 0);
    b.execs.push_back(e); b.nodes.push_back(nodes);
  }
  cuStreamDestroy(s);
  return b;
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  cuInit(0);
  CUdevice dev; cuDeviceGet(&dev, 0);
  CUcontext ctx; cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
  float* buf; cudaMalloc(&buf, 4096);
  CUstream run; cuStreamCreate(&run, CU_STREAM_NON_BLOCKING);
  const int graphs = 100, per = 16, iterations = 30;
  for (int round = 0; round < 3; ++round) {
    for (int other = 0; other < 2; ++other) {
      Built b;
      double built_us = now_us();
      if (other) { std::thread t([&] { b = build(ctx, buf, graphs, per); }); t.join(); }
      else b = build(ctx, buf, graphs, per);
      built_us = now_us() - built_us;
      CUDA_KERNEL_NODE_PARAMS p;
      double write_us = 0, launch_us = 0; long writes = 0, launches = 0;
      for (int it = 0; it < iterations; ++it) {
        for (int g = 0; g < graphs; ++g) {
          for (CUgraphNode n : b.nodes[g]) {
            cuGraphKernelNodeGetParams(n, &p);
            float v = 1.0f + it;
            void* args[] = {&buf, &v};
            p.kernelParams = args;
            const double t0 = now_us();
            cuGraphExecKernelNodeSetParams(b.execs[g], n, &p);
            write_us += now_us() - t0; ++writes;
          }
          const double t0 = now_us();
          cuGraphLaunch(b.execs[g], run);
          launch_us += now_us() - t0; ++launches;
        }
        cuStreamSynchronize(run);
      }
      std::printf("round %d, built on %-14s built %.1f ms, node write %.2f us, launch %.2f us\n", round,
                  other ? "another thread" : "this thread", built_us / 1e3, write_us / writes, launch_us / launches);
      for (CUgraphExec e : b.execs) cuGraphExecDestroy(e);
    }
  }
  return 0;
}
