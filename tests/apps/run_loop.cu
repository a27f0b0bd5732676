// A training-loop-shaped CUDA program for the `nimble run` GPU tests (tests/apps/CMakeLists.txt).
//
// Every iteration, on the legacy default stream: fresh host data copied in, a kernel with a
// per-iteration seed (a scalar that changes every time, like an RNG offset), a memset whose value
// changes, a chain of small kernels, the result copied back and the stream synchronised. It
// prints a checksum of each iteration's result, so a run under nimble can be compared with a
// plain run byte for byte.
//
// Usage: run_loop [ITERATIONS] [--change-shape-at K] [--sync-every M]
//   --change-shape-at K: iterations K, K+1, K+2 compute on half the elements (the input copy
//   stays whole, the kernels' launch shapes change), then it goes back to the recorded shape.
//   --sync-every M: the result is copied back, the stream synchronised and the checksum printed
//   only every M iterations (and after the last), as scripts that read their loss every few
//   steps do: the host waits for the GPU every M iterations' worth of calls. Before each such
//   read a kernel of a launch shape drawn from the iteration number runs (as a loss over a
//   data-dependent count of rows does), so the stretch from one read to the next never repeats:
//   only the iteration itself can be recorded. Before the loop, a set-up kernel and a device-wide
//   sync, as a program's initialisation has.
// Exit status 77 means "no GPU" (ctest SKIP_RETURN_CODE).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check_call.hpp"

__global__ void noise(float* out, int n, unsigned long long seed) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned long long x = seed ^ (0x9E3779B97F4A7C15ull * (i + 1));
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    out[i] = static_cast<float>(x & 0xffff) / 65536.0f;
  }
}

__global__ void mix(const float* in, const float* noise, float* out, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * factor + noise[i];
}

__global__ void step(float* x, const int* bias, int n, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.999f + static_cast<float>(bias[i] & 0xff) * 0.001f + 0.0001f * k;
}

std::uint64_t fnv1a(const void* data, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

int main(int argc, char** argv) {
  int iterations = 30, change_at = -1, sync_every = 1;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--change-shape-at") == 0 && a + 1 < argc) {
      change_at = std::atoi(argv[++a]);
    } else if (std::strcmp(argv[a], "--sync-every") == 0 && a + 1 < argc) {
      sync_every = std::max(1, std::atoi(argv[++a]));
    } else {
      iterations = std::atoi(argv[a]);
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("run_loop: no CUDA device, skipping\n");
    return 77;
  }
  constexpr int full = 1 << 16, threads = 256, chain = 12;
  float *d_in, *d_noise, *d_x;
  int* d_bias;
  CHECK(cudaMalloc(&d_in, full * sizeof(float)));
  CHECK(cudaMalloc(&d_noise, full * sizeof(float)));
  CHECK(cudaMalloc(&d_x, full * sizeof(float)));
  CHECK(cudaMalloc(&d_bias, full * sizeof(int)));
  std::vector<float> in(full), out(full);
  if (sync_every > 1) {
    CHECK(cudaMemsetAsync(d_x, 0, full * sizeof(float), 0));
    CHECK(cudaMemsetAsync(d_bias, 0, full * sizeof(int), 0));
    step<<<full / threads, threads>>>(d_x, d_bias, full, 0);
    CHECK(cudaDeviceSynchronize());
  }
  for (int it = 0; it < iterations; ++it) {
    const bool half = change_at >= 0 && it >= change_at && it < change_at + 3;
    const int n = half ? full / 2 : full, blocks = (n + threads - 1) / threads;
    for (int i = 0; i < n; ++i) in[i] = static_cast<float>((i * 31 + it * 17) % 1000) / 100.0f;
    for (int i = n; i < full; ++i) in[i] = 0.0f;
    CHECK(cudaMemcpyAsync(d_in, in.data(), full * sizeof(float), cudaMemcpyHostToDevice, 0));
    noise<<<blocks, threads>>>(d_noise, n, 0xA5A5000000000000ull + 0x1234567ull * it);  // never a device address
    CHECK(cudaMemsetAsync(d_bias, it % 7 + 1, n * sizeof(int), 0));
    mix<<<blocks, threads>>>(d_in, d_noise, d_x, n, 0.5f);
    for (int k = 0; k < chain; ++k) step<<<blocks, threads>>>(d_x, d_bias, n, k);
    CHECK(cudaGetLastError());
    if ((it + 1) % sync_every != 0 && it + 1 != iterations) continue;
    if (sync_every > 1) {
      const int rows = threads * (1 + static_cast<int>(fnv1a(&it, sizeof it) % 13));
      step<<<rows / threads, threads>>>(d_x, d_bias, rows, chain);
    }
    CHECK(cudaMemcpyAsync(out.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost, 0));
    CHECK(cudaStreamSynchronize(0));
    std::printf("iteration %d n %d checksum %016llx\n", it, n,
                static_cast<unsigned long long>(fnv1a(out.data(), n * sizeof(float))));
  }
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_noise));
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_bias));
  return 0;
}
