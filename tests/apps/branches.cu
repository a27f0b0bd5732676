// A CUDA program with a known task graph, for the GPU tests (tests/apps/CMakeLists.txt).
//
// Inside cudaProfilerStart/Stop, on two non-blocking streams:
//
//   s1: h2d(A) ──e0──► s2: memset(C) ─► scale(A→C)  [driver cuLaunchKernel]
//        │                                   │
//        ▼                                   e1
//       fill(B) ─► add_one(B)  [<<<>>>]      │
//                       └──────────┬─────────┘
//                                  ▼
//                      join(B,C→D) [driver cuLaunchKernel] ─► d2h(D) ─► cudaStreamSynchronize(s1)
//
// The two branches touch disjoint buffers, so after transitive reduction the recorded DAG must be
// exactly the one drawn. Exit status 77 means "no GPU" (ctest SKIP_RETURN_CODE).
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>

#include "check_call.hpp"

__global__ void scale(const float* in, float* out, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += factor * in[i];
}

__global__ void fill(float* out, int n, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

__global__ void add_one(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

__global__ void join(const float* b, const float* c, float* d, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = b[i] + c[i];
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("branches: no CUDA device, skipping\n");
    return 77;
  }
  constexpr int n = 1 << 20;
  constexpr size_t bytes = n * sizeof(float);
  constexpr int threads = 256, blocks = (n + threads - 1) / threads;

  cudaStream_t s1, s2;
  cudaEvent_t e0, e1;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&e0, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming));
  float *a, *b, *c, *d, *host_in, *host_out;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  CHECK(cudaMalloc(&d, bytes));
  CHECK(cudaMallocHost(&host_in, bytes));
  CHECK(cudaMallocHost(&host_out, bytes));
  for (int i = 0; i < n; ++i) host_in[i] = static_cast<float>(i % 1000);

  // The driver-API launches use CUfunction handles of the same kernels.
  cudaFunction_t scale_fn, join_fn;
  CHECK(cudaGetFuncBySymbol(&scale_fn, reinterpret_cast<const void*>(&scale)));
  CHECK(cudaGetFuncBySymbol(&join_fn, reinterpret_cast<const void*>(&join)));

  // Warm up outside the range so module loading does not happen inside it.
  fill<<<blocks, threads, 0, s1>>>(b, n, 0.0f);
  add_one<<<blocks, threads, 0, s1>>>(b, n);
  scale<<<blocks, threads, 0, s1>>>(a, c, n, 0.0f);
  join<<<blocks, threads, 0, s1>>>(b, c, d, n);
  CHECK(cudaDeviceSynchronize());

  int count = n;
  float factor = 2.0f;
  CHECK(cudaProfilerStart());
  CHECK(cudaMemcpyAsync(a, host_in, bytes, cudaMemcpyHostToDevice, s1));
  CHECK(cudaEventRecord(e0, s1));
  CHECK(cudaStreamWaitEvent(s2, e0, 0));
  CHECK(cudaMemsetAsync(c, 0, bytes, s2));
  void* scale_args[] = {&a, &c, &count, &factor};
  CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale_fn), blocks, 1, 1, threads, 1, 1, 0, s2,
                       scale_args, nullptr));
  fill<<<blocks, threads, 0, s1>>>(b, n, 1.0f);
  add_one<<<blocks, threads, 0, s1>>>(b, n);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(e1, s2));
  CHECK(cudaStreamWaitEvent(s1, e1, 0));
  void* join_args[] = {&b, &c, &d, &count};
  CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(join_fn), blocks, 1, 1, threads, 1, 1, 0, s1,
                       join_args, nullptr));
  CHECK(cudaMemcpyAsync(host_out, d, bytes, cudaMemcpyDeviceToHost, s1));
  CHECK(cudaStreamSynchronize(s1));
  CHECK(cudaProfilerStop());

  for (int i = 0; i < n; ++i) {
    const float expected = 2.0f + 2.0f * static_cast<float>(i % 1000);
    if (std::fabs(host_out[i] - expected) > 1e-3f) {
      std::fprintf(stderr, "branches: wrong result at %d: %f, expected %f\n", i, host_out[i], expected);
      return 1;
    }
  }
  // Device memory must still hold this iteration's result (`nimble bench` replays the iteration
  // in between and must put everything back).
  CHECK(cudaMemcpy(host_out, d, bytes, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const float expected = 2.0f + 2.0f * static_cast<float>(i % 1000);
    if (std::fabs(host_out[i] - expected) > 1e-3f) {
      std::fprintf(stderr, "branches: device memory changed at %d: %f, expected %f\n", i, host_out[i], expected);
      return 1;
    }
  }
  std::printf("branches: ok\n");
  return 0;
}
