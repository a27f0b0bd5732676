// What a program's calls do while another thread of the process holds a RELAXED stream capture open
// on a non-blocking stream of its own (nimble run builds graphs that way while the program runs
// on): each call's result, and whether the capture survived. nvcc -o ci capture_isolation.cu -lcuda
#include <cuda.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

__global__ void nop(int* p) { if (p) *p = 1; }

static std::atomic<int> phase{0};

int main() {
  cuInit(0);
  CUdevice dev; cuDeviceGet(&dev, 0);
  CUcontext ctx; cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
  CUdeviceptr buf; cuMemAlloc(&buf, 1 << 20);
  const char* names[] = {"cuCtxSynchronize", "cuMemAlloc", "cuMemFree", "cuMemcpyHtoD (sync)", "cuMemsetD8 (sync)",
                         "cuStreamSynchronize(legacy)", "cuStreamSynchronize(program non-blocking)",
                         "launch on legacy stream", "cuMemAllocHost", "cuMemFreeHost", "cuEventSynchronize",
                         "cuStreamBeginCapture GLOBAL (program's own)"};
  const int n = sizeof names / sizeof *names;
  for (int which = 0; which < n; ++which) {
    CUresult during = CUDA_SUCCESS, end = CUDA_SUCCESS, inst = CUDA_SUCCESS;
    phase = 0;
    std::thread capturer([&] {
      cuCtxSetCurrent(ctx);
      CUstream s; cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
      cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED);
      nop<<<1, 1, 0, (cudaStream_t)s>>>(nullptr);
      phase = 1;
      while (phase != 2) std::this_thread::sleep_for(std::chrono::microseconds(50));
      nop<<<1, 1, 0, (cudaStream_t)s>>>(nullptr);
      CUgraph g = nullptr;
      end = cuStreamEndCapture(s, &g);
      CUgraphExec e = nullptr;
      inst = g ? cuGraphInstantiate(&e, g, 0) : CUDA_ERROR_INVALID_VALUE;
      if (e) cuGraphExecDestroy(e);
      if (g) cuGraphDestroy(g);
      cuStreamDestroy(s);
    });
    while (phase != 1) std::this_thread::sleep_for(std::chrono::microseconds(50));
    CUstream mine; cuStreamCreate(&mine, CU_STREAM_NON_BLOCKING);
    CUevent ev; cuEventCreate(&ev, 0); cuEventRecord(ev, mine);
    char host[64] = {};
    CUdeviceptr tmp = 0; void* ph = nullptr;
    switch (which) {
      case 0: during = cuCtxSynchronize(); break;
      case 1: during = cuMemAlloc(&tmp, 4096); break;
      case 2: cuMemAlloc(&tmp, 4096); during = cuMemFree(tmp); tmp = 0; break;
      case 3: during = cuMemcpyHtoD(buf, host, sizeof host); break;
      case 4: during = cuMemsetD8(buf, 0, 64); break;
      case 5: during = cuStreamSynchronize(nullptr); break;
      case 6: during = cuStreamSynchronize(mine); break;
      case 7: nop<<<1, 1>>>(nullptr); during = (CUresult)cudaGetLastError(); break;
      case 8: during = cuMemAllocHost(&ph, 4096); break;
      case 9: cuMemAllocHost(&ph, 4096); during = cuMemFreeHost(ph); ph = nullptr; break;
      case 10: during = cuEventSynchronize(ev); break;
      case 11: {
        CUstream c; cuStreamCreate(&c, CU_STREAM_NON_BLOCKING);
        during = cuStreamBeginCapture(c, CU_STREAM_CAPTURE_MODE_GLOBAL);
        CUgraph g = nullptr; if (during == CUDA_SUCCESS) cuStreamEndCapture(c, &g);
        if (g) cuGraphDestroy(g);
        cuStreamDestroy(c);
        break;
      }
    }
    phase = 2;
    capturer.join();
    if (tmp) cuMemFree(tmp);
    if (ph) cuMemFreeHost(ph);
    cuEventDestroy(ev); cuStreamDestroy(mine);
    const char *a = "", *b = "", *c = "";
    cuGetErrorName(during, &a); cuGetErrorName(end, &b); cuGetErrorName(inst, &c);
    std::printf("%-45s program's call: %-40s capture end: %-40s instantiate: %s\n", names[which], a, b, c);
    cuCtxSynchronize();
  }
  return 0;
}
