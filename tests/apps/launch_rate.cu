// Host cost of launching an empty kernel, for the idle-overhead check in scripts/gpu_tests.sh:
// run it plain and with LD_PRELOAD=libnimble.so (NIMBLE_MODE unset) and compare. Prints the
// median nanoseconds per launch over batches, through the runtime (<<<>>>, which reaches the
// driver through cuGetProcAddress) and through the exported driver symbol cuLaunchKernel.
// Exit status 77 without a GPU.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty_kernel() {}

template <class Launch>
double median_ns_per_launch(Launch launch) {
  constexpr int kBatch = 256, kBatches = 300;
  std::vector<double> per_launch;
  for (int b = 0; b < kBatches; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kBatch; ++i) launch();
    const auto end = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();  // drain outside the timed part, so the queue never fills
    per_launch.push_back(std::chrono::duration<double, std::nano>(end - start).count() / kBatch);
  }
  std::nth_element(per_launch.begin(), per_launch.begin() + kBatches / 2, per_launch.end());
  return per_launch[kBatches / 2];
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("launch_rate: no CUDA device, skipping\n");
    return 77;
  }
  cudaFunction_t fn;
  cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&empty_kernel));
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  cudaDeviceSynchronize();
  const double runtime_ns = median_ns_per_launch([&] { empty_kernel<<<1, 1, 0, stream>>>(); });
  const double driver_ns = median_ns_per_launch([&] {
    cuLaunchKernel(reinterpret_cast<CUfunction>(fn), 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr);
  });
  std::printf("{\"runtime_launch_ns\": %.1f, \"driver_launch_ns\": %.1f}\n", runtime_ns, driver_ns);
  return 0;
}
