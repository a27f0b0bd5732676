// A stand-in for a CUDA program, run by the CPU tests with LD_PRELOAD=libnimble.so and
// NIMBLE_LIBCUDA=<fake driver>. It reaches the driver through every door (exported symbols,
// dlsym, cuGetProcAddress with legacy and per-thread flags) and checks where calls land.
// Exit status 0 when every check passed; failures are printed.
#include <cuda.h>
#include <cudaProfiler.h>
#include <cudnn.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" const char* fake_driver_last_call();
extern "C" CUfunction fake_driver_function(const char* which);
extern "C" void* fake_driver_direct_launch();
extern "C" int fake_driver_count(const char* name);
extern "C" std::uint64_t fake_driver_work_digest();
extern "C" std::uint64_t fake_driver_work_kernels();
extern "C" int fake_cudnn_executes();
extern "C" int fake_driver_use_after_free();

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures;
  }
}

bool in_libnimble(void* p) {
  Dl_info info{};
  return p && dladdr(p, &info) && info.dli_fname && std::strstr(info.dli_fname, "libnimble");
}

void* driver_handle() { return dlopen(std::getenv("NIMBLE_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD); }

PFN_cuGetProcAddress_v12000 get_proc_address() {
  return reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver_handle(), "cuGetProcAddress_v2"));
}

template <class Fn>
Fn proc(const char* name, int version, cuuint64_t flags) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status;
  get_proc_address()(name, &p, version, flags, &status);
  return reinterpret_cast<Fn>(p);
}

void launch(PFN_cuLaunchKernel_v4000 fn, CUfunction f, CUstream s, void** params, void** extra = nullptr) {
  fn(f, 2, 1, 1, 64, 1, 1, 0, s, params, extra);
}

int funnel() {
  // The exported symbol forwards to the real function and returns its result unchanged.
  CUfunction scale = fake_driver_function("scale");
  check(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr) == CUDA_SUCCESS,
        "exported cuLaunchKernel returns the driver's result");
  check(std::strcmp(fake_driver_last_call(), "cuLaunchKernel") == 0, "exported symbol reaches cuLaunchKernel");

  void* gpa = dlsym(driver_handle(), "cuGetProcAddress_v2");
  check(in_libnimble(gpa), "dlsym(libcuda, cuGetProcAddress_v2) returns nimble's wrapper");
  check(!in_libnimble(dlsym(driver_handle(), "cuInit")), "dlsym of an unhooked name passes through");

  auto per_thread = proc<PFN_cuLaunchKernel_v7000_ptsz>("cuLaunchKernel", 12000,
                                                        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
  check(in_libnimble(reinterpret_cast<void*>(per_thread)), "per-thread cuLaunchKernel is wrapped");
  per_thread(scale, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  check(std::strcmp(fake_driver_last_call(), "cuLaunchKernel_ptsz") == 0,
        std::string("per-thread wrapper reaches cuLaunchKernel_ptsz, got ") + fake_driver_last_call());

  auto legacy = proc<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
  check(in_libnimble(reinterpret_cast<void*>(legacy)), "legacy cuLaunchKernel is wrapped");
  legacy(scale, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  check(std::strcmp(fake_driver_last_call(), "cuLaunchKernel") == 0, "legacy wrapper reaches cuLaunchKernel");

  void* self = proc<void*>("cuGetProcAddress", 12000, 0);
  check(in_libnimble(self), "cuGetProcAddress(\"cuGetProcAddress\") returns nimble's wrapper");
  void* v1 = proc<void*>("cuGetProcAddress", 11030, 0);
  check(in_libnimble(v1) && v1 != self, "cuGetProcAddress v1 gets the v1 wrapper");

  void* future = proc<void*>("cuLaunchKernel", 90000, 0);
  check(future && !in_libnimble(future), "a variant nimble does not know passes through");
  check(!in_libnimble(proc<void*>("cuDeviceGetName", 12000, 0)), "unhooked names pass through");

  // glibc must still see the program as the caller: RTLD_NEXT from here finds nimble's dlsym.
  check(in_libnimble(dlsym(RTLD_NEXT, "dlsym")), "dlsym(RTLD_NEXT) keeps the caller's identity");
  return failures;
}

// One iteration of a small two-stream program, reaching the driver through all three doors.
void iteration(CUstream s1, CUstream s2, CUevent e, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c,
               float* host) {
  CUfunction scale = fake_driver_function("scale");
  CUfunction fill = fake_driver_function("fill");
  int n = 256;
  cuMemcpyHtoDAsync(a, host, 1024, s1);                                   // task: copy HtoD
  void* scale_args[] = {&a, &b, &n};
  launch(proc<PFN_cuLaunchKernel_v4000>("cuLaunchKernel", 12000, 0), scale, s1, scale_args);  // a -> b
  cuEventRecord(e, s1);
  auto wait = reinterpret_cast<PFN_cuStreamWaitEvent_v3020>(dlsym(driver_handle(), "cuStreamWaitEvent"));
  wait(s2, e, 0);
  // `extra` form: the argument buffer itself.
  struct { CUdeviceptr p; int n; int pad; } buffer{c, n, 0};
  size_t size = sizeof buffer;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  launch(cuLaunchKernel, fill, s2, nullptr, extra);                       // writes c
  cuMemsetD32Async(c, 0, 4, s2);
  // Per-thread default stream through cuGetProcAddress: stream 0 means this thread's stream.
  proc<PFN_cuLaunchKernel_v7000_ptsz>("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)(
      fake_driver_function("noargs"), 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
  cuMemcpyDtoHAsync(host, b, 1024, s1);
  cuStreamSynchronize(s1);
}

// `iterations` of iteration(); with `bracket`, the last between cuProfilerStart/Stop; with
// `queries`, that many completed cuStreamQuery calls after iteration i (queries[i % 16]).
int record(int iterations, bool bracket, const int* queries = nullptr) {
  CUstream s1, s2;
  CUevent e;
  cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  cuEventCreate(&e, 0);
  CUdeviceptr a, b, c;
  cuMemAlloc(&a, 1024);
  cuMemAlloc(&b, 1024);
  cuMemAlloc(&c, 1024);
  static float host[256];
  for (int i = 0; i < iterations; ++i) {
    if (bracket && i == iterations - 1) cuProfilerStart();
    iteration(s1, s2, e, a, b, c, host);
    if (bracket && i == iterations - 1) cuProfilerStop();
    for (int q = 0; queries && q < queries[i % 16]; ++q) cuStreamQuery(s1);
  }
  return 0;
}

// The automatic range on a program that polls its stream a varying number of times per iteration
// (as XLA does): each completed query is a host synchronisation, but their number depends on
// timing. Iterations of `record`'s kind with 0, 1 or 2 queries after them, in an order with no
// three equal blocks in a row (so the queries cannot form a period of their own).
int polled(int iterations) {
  static const int queries[16] = {0, 2, 1, 0, 0, 1, 2, 2, 0, 1, 1, 2, 0, 0, 2, 1};
  return record(iterations, false, queries);
}

// Two streams whose order never repeats three times over (JAX feeds its transfer streams from
// other threads): per iteration six kernels on one stream and another kernel on the other at a
// turn among them, then a device sync. No period can be found in the whole sequence.
//  * one thread: the turn is (i*i)%7 (which repeats only every 7 iterations: run fewer than 21);
//  * `threads`: the other kernel comes from a second thread, which the main thread hands its turn
//    and waits for; the turn is 1 or 4 following the Thue-Morse sequence, which never repeats a
//    block three times in a row, so no period shows however long the program runs.
int interleaved(int iterations, bool threads) {
  CUstream s1, s2;
  cuStreamCreate(&s1, 0);
  cuStreamCreate(&s2, 0);
  CUdeviceptr a;
  cuMemAlloc(&a, 64);
  int n = 1;
  void* args[] = {&a, &n};
  CUfunction fill = fake_driver_function("fill"), other = fake_driver_function("noargs");
  std::mutex mu;
  std::condition_variable cv;
  int asked = 0, done = 0;
  std::thread helper;
  if (threads) {
    helper = std::thread([&] {
      for (int i = 0; i < iterations; ++i) {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return asked > i; });
        launch(cuLaunchKernel, other, s2, nullptr);
        ++done;
        cv.notify_all();
      }
    });
  }
  auto launch_other = [&](int i) {
    if (!threads) {
      launch(cuLaunchKernel, other, s2, nullptr);
      return;
    }
    std::unique_lock<std::mutex> lock(mu);
    ++asked;
    cv.notify_all();
    cv.wait(lock, [&] { return done > i; });
  };
  for (int i = 0; i < iterations; ++i) {
    const int turn = !threads ? (i * i) % 7 : (__builtin_popcount(static_cast<unsigned>(i)) & 1) ? 4 : 1;
    for (int k = 0; k < 7; ++k) {
      if (k == turn) {
        launch_other(i);
      } else {
        launch(cuLaunchKernel, fill, s1, args);
      }
    }
    cuCtxSynchronize();
  }
  if (threads) helper.join();
  return 0;
}

int exit_while_open() {
  CUstream s;
  cuStreamCreate(&s, 0);
  CUdeviceptr a;
  cuMemAlloc(&a, 64);
  cuProfilerStart();
  int n = 1;
  void* args[] = {&a, &n};
  launch(cuLaunchKernel, fake_driver_function("fill"), s, args);
  return 0;  // exits with the window open
}

int fork_child_does_not_write() {
  cuProfilerStart();
  CUdeviceptr a;
  cuMemAlloc(&a, 64);
  int n = 1;
  void* args[] = {&a, &n};
  const pid_t child = fork();
  if (child == 0) {
    launch(cuLaunchKernel, fake_driver_function("fill"), nullptr, args);
    cuProfilerStop();
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  launch(cuLaunchKernel, fake_driver_function("fill"), nullptr, args);
  cuProfilerStop();
  return 0;
}

// 0, 1 or 2, drawn at random from `state` (a fixed generator: every run draws the same sequence).
unsigned one_of_three(std::uint32_t& state) {
  state = state * 1103515245u + 12345u;
  return (state >> 16) % 3;
}

// What the single-stream loops share: the two fake kernels and two 1 KiB buffers.
struct LoopParts {
  CUfunction scale = fake_driver_function("scale");
  CUfunction fill = fake_driver_function("fill");
  CUdeviceptr a = 0, b = 0;
  LoopParts() {
    cuMemAlloc(&a, 1024);
    cuMemAlloc(&b, 1024);
  }
};

// How the loops on a stream of their own end an iteration: the fill kernel, the copy out, the sync.
void end_iteration(CUfunction fill, CUdeviceptr b, float* host, CUstream s) {
  int m = 7;
  void* fill_args[] = {&b, &m};
  cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, s, fill_args, nullptr);
  cuMemcpyDtoHAsync(host, b, 1024, s);
  cuStreamSynchronize(s);
}

// Host ns the program spent inside nimble's wrappers (NIMBLE_HOST_TIMES=1), as libnimble.so reports
// it to programs timing their own steps; -1 without libnimble.so.
long long host_ns_inside_nimble() {
  using Fn = unsigned long long (*)();
  const auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "nimble_host_ns_inside"));
  return fn ? static_cast<long long>(fn()) : -1;
}

// A single-stream loop for `nimble run`: each iteration copies fresh host data in, launches a
// kernel whose scalar argument changes every time, a memset whose value changes, a second kernel,
// copies the result out and synchronises; iteration 1 is bracketed by cuProfilerStart/Stop. With
// `change_at`, that iteration's second kernel has another grid (a mismatch mid-iteration). Prints
// how many launches reached the driver as work, as graph nodes, and as graph launches.
int loop(int iterations, int change_at) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  for (int i = 0; i < iterations; ++i) {
    if (i == 1) cuProfilerStart();
    int n = 100 + i;  // a scalar that changes every iteration
    cuMemcpyHtoDAsync(a, host, 1024, nullptr);
    void* scale_args[] = {&a, &b, &n};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
    cuMemsetD32Async(b, static_cast<unsigned>(i), 16, nullptr);
    int m = 7;
    void* fill_args[] = {&b, &m};
    cuLaunchKernel(fill, i == change_at ? 4 : 2, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
    cuMemcpyDtoHAsync(host, b, 1024, nullptr);
    cuStreamSynchronize(nullptr);
    if (i == 1) cuProfilerStop();
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("inside_ns=%lld\n", host_ns_inside_nimble());
  std::printf("kernels_run=%d memsets_run=%d captured=%d graph_launches=%d node_updates=%d\n",
              fake_driver_count("cuLaunchKernel"), fake_driver_count("cuMemsetD32Async"),
              fake_driver_count("captured"), fake_driver_count("cuGraphLaunch"),
              fake_driver_count("cuGraphExecKernelNodeSetParams") + fake_driver_count("cuGraphExecMemsetNodeSetParams"));
  return 0;
}

// The single-stream loop (iteration 1 bracketed) run until nimble run has replayed a few
// iterations and then 5 more, for at most 20 s; or exactly `iterations` when given (the plain run
// to compare with). Prints the work digest, how many iterations ran, and the first
// iteration nimble run reported replayed (-1: none).
// `own_capture`: after the recorded iteration the program captures a graph of its own (GLOBAL mode,
// held open 100 ms, as torch.cuda.graph's capture is while it runs a model) and launches it.
// `stream_ops_every`: every that many iterations (from the first), stream work between the two
// kernels that nimble does not look into: a value written to memory and waited for, a prefetch and
// a synchronous copy into an array (the stream first, last, and none: the default stream).
int loop_until_replayed(int iterations, bool context_sync = false, bool own_capture = false, int stream_ops_every = 0) {
  using Counter = unsigned long long (*)();
  const auto replayed = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "nimble_run_iterations_replayed"));
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int i = 0, first_replayed = -1, stop_at = iterations > 0 ? iterations : 1 << 30, failed_syncs = 0;
  int own_capture_failed = 0;
  // Made before anything is recorded: the fake driver's work digest holds a created stream's
  // handle, and nimble's thread takes handles of its own when it builds, before or after this.
  CUstream own = nullptr;
  if (own_capture) cuStreamCreate(&own, CU_STREAM_NON_BLOCKING);
  for (; i < stop_at && (iterations > 0 || std::chrono::steady_clock::now() < deadline); ++i) {
    if (i == 1) cuProfilerStart();
    int n = 100 + i % 7;
    cuMemcpyHtoDAsync(a, host, 1024, nullptr);
    void* scale_args[] = {&a, &b, &n};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
    if (stream_ops_every > 0 && i % stream_ops_every == 0) {
      cuStreamWriteValue32(nullptr, b, static_cast<cuuint32_t>(i), 0);
      cuStreamWaitValue32(nullptr, b, static_cast<cuuint32_t>(i), CU_STREAM_WAIT_VALUE_EQ);
      cuMemPrefetchAsync(b, 1024, CUmemLocation{CU_MEM_LOCATION_TYPE_DEVICE, 0}, 0, nullptr);
      cuMemcpyHtoA(nullptr, static_cast<size_t>(i), host, 16);
    }
    int m = 7;
    void* fill_args[] = {&b, &m};
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
    cuMemcpyDtoHAsync(host, b, 1024, nullptr);
    cuStreamSynchronize(nullptr);
    if (i == 1) cuProfilerStop();
    if (context_sync && i > 1) failed_syncs += cuCtxSynchronize() != CUDA_SUCCESS;  // torch.cuda.synchronize()
    if (own_capture && i == 2) {
      CUgraph graph = nullptr;
      CUgraphExec exec = nullptr;
      own_capture_failed = cuStreamBeginCapture(own, CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS;
      cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, own, fill_args, nullptr);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      own_capture_failed += cuStreamEndCapture(own, &graph) != CUDA_SUCCESS;
      own_capture_failed += !graph || cuGraphInstantiateWithFlags(&exec, graph, 0) != CUDA_SUCCESS;
      if (exec) cuGraphLaunch(exec, own);
      cuStreamSynchronize(own);
    }
    if (iterations <= 0 && first_replayed < 0 && replayed && replayed() >= 3) {
      first_replayed = i;
      stop_at = i + 6;
    }
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("iterations=%d first_replayed=%d kernels_run=%d graph_launches=%d failed_context_syncs=%d "
              "own_capture_failed=%d stream_writes=%d array_copies=%d\n",
              i, first_replayed, fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"), failed_syncs,
              own_capture_failed, fake_driver_count("cuStreamWriteValue32_v2"), fake_driver_count("cuMemcpyHtoA_v2"));
  return 0;
}

// The single-stream loop with what CuPy, JAX and timing code put between kernels: an event
// recorded after the first kernel (a timing or a pool's event), a host function (JAX marks buffers
// ready with one), and the event queried while later work is still being issued. Iteration 1 is
// bracketed by cuProfilerStart/Stop. Prints the work digest and how often the host function ran.
int host_function_calls = 0;
void count_host_function(void* counter) { ++*static_cast<int*>(counter); }

int loop_events(int iterations) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  CUevent event = nullptr;
  cuEventCreate(&event, 0);
  for (int i = 0; i < iterations; ++i) {
    if (i == 1) cuProfilerStart();
    int n = 100 + i;
    void* scale_args[] = {&a, &b, &n};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
    cuEventRecord(event, nullptr);
    cuLaunchHostFunc(nullptr, count_host_function, &host_function_calls);
    cuMemsetD32Async(b, static_cast<unsigned>(i), 16, nullptr);
    cuEventQuery(event);
    int m = 7;
    void* fill_args[] = {&b, &m};
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
    cuMemcpyDtoHAsync(host, b, 1024, nullptr);
    cuStreamSynchronize(nullptr);
    if (i == 1) cuProfilerStop();
  }
  std::printf("work=%016llx host_functions=%d\n", static_cast<unsigned long long>(fake_driver_work_digest()),
              host_function_calls);
  std::printf("kernels_run=%d graph_launches=%d\n", fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  return 0;
}

// A loop over two created streams, ordered by the program's own events (as a side stream or
// NCCL's stream is): a kernel on s1, s2 waits for it, a kernel and a memset on s2, s1 waits for
// those, a second kernel on s1, the result copied out on s1 and synchronised. Iteration 1 is
// bracketed. Prints the work digest (kernels, arguments and streams) and the graph launches.
// With `per_thread`, s1 is the per-thread default stream; with `collective`, s2's kernel is an
// NCCL-named all-reduce kernel.
int loop_streams(int iterations, bool per_thread, bool collective = false) {
  const CUfunction reduce = fake_driver_function("collective");
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  CUstream s1 = nullptr, s2 = nullptr;
  if (per_thread) s1 = CU_STREAM_PER_THREAD;
  else cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING);
  cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
  CUevent on_s1 = nullptr, on_s2 = nullptr;
  cuEventCreate(&on_s1, 0);
  cuEventCreate(&on_s2, 0);
  for (int i = 0; i < iterations; ++i) {
    if (i == 1) cuProfilerStart();
    int n = 100 + i;
    void* scale_args[] = {&a, &b, &n};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, s1, scale_args, nullptr);
    cuEventRecord(on_s1, s1);
    cuStreamWaitEvent(s2, on_s1, 0);
    int m = 7 + i;
    void* fill_args[] = {&b, &m};
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, s2, fill_args, nullptr);
    // NCCL's way: an `extra` buffer of the 16 bytes used, under a declared 4 KB argument.
    struct { CUdeviceptr data; std::uint64_t count; } used{b, 256};
    std::size_t used_size = sizeof used;
    void* reduce_extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &used, CU_LAUNCH_PARAM_BUFFER_SIZE, &used_size,
                            CU_LAUNCH_PARAM_END};
    if (collective) cuLaunchKernel(reduce, 1, 1, 1, 64, 1, 1, 0, s2, nullptr, reduce_extra);
    cuMemsetD32Async(a, static_cast<unsigned>(i), 16, s2);
    cuEventRecord(on_s2, s2);
    cuStreamWaitEvent(s1, on_s2, 0);
    int k = 3;
    void* again_args[] = {&a, &b, &k};
    cuLaunchKernel(scale, 4, 1, 1, 64, 1, 1, 0, s1, again_args, nullptr);
    cuMemcpyDtoHAsync(host, b, 1024, s1);
    cuStreamSynchronize(s1);
    if (i == 1) cuProfilerStop();
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("kernels_run=%d graph_launches=%d collectives_run=%d\n", fake_driver_count("cuLaunchKernel"),
              fake_driver_count("cuGraphLaunch"), fake_driver_count("collective_run"));
  return 0;
}

// A program as people write it, with nothing bracketed: a set-up that repeats its own short
// pattern (each parameter initialised by a kernel, uploaded and synchronised, as timm and
// transformers models are built), then `epochs` of `steps` training steps (with `short_last`, the
// last one a short batch: a smaller input copy and grids) and `evals` eval steps that begin with
// the same input copy but launch other kernels (`eval_kernels` of them). Prints the work digest, the kernels and graph
// launches that reached the driver, and how many steps ran.
// A convolution through the fake cuDNN, as PyTorch calls it: an execution plan made once, a
// variant pack made, executed and destroyed every call (cudnnBackendExecute launches one kernel).
struct FakeConvolution {
  cudnnHandle_t handle = nullptr;
  cudnnBackendDescriptor_t plan = nullptr;
  FakeConvolution() {
    cudnnCreate(&handle);
    cudnnSetStream(handle, nullptr);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    cudnnBackendFinalize(plan);
  }
  ~FakeConvolution() {
    cudnnBackendDestroyDescriptor(plan);
    cudnnDestroy(handle);
  }
  void run(CUdeviceptr x, CUdeviceptr out) {
    cudnnBackendDescriptor_t pack = nullptr;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    void* pointers[] = {reinterpret_cast<void*>(x), reinterpret_cast<void*>(out)};
    std::int64_t uids[] = {1, 2};
    cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 2, pointers);
    cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 2, uids);
    cudnnBackendFinalize(pack);
    check(cudnnBackendExecute(handle, plan, pack) == CUDNN_STATUS_SUCCESS, "cudnnBackendExecute");
    cudnnBackendDestroyDescriptor(pack);
  }
};

// `convolutions`: cuDNN calls in each training step, after its first kernel.
// `first_eval_differs`: the first batch of each eval pass launches one more kernel (as a library's
// first call on a new shape does).
// `progress_reads`: after each training step's loss read, 0, 1 or 2 more reads of a metric and a
// sync, a number that changes from step to step (a progress bar that refreshes when its clock says).
int program(int epochs, int steps, int evals, bool short_last = false, int eval_kernels = 1, int convolutions = 0,
            bool first_eval_differs = false, int log_every = 0, bool progress_reads = false) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  int params = 40;
  for (int p = 0; p < params; ++p) {  // set-up: init kernel, upload, sync
    int v = p;
    void* init_args[] = {&a, &v};
    cuLaunchKernel(fill, 8, 1, 1, 128, 1, 1, 0, nullptr, init_args, nullptr);
    cuMemcpyHtoDAsync(b, host, 256, nullptr);
    cuCtxSynchronize();
  }
  std::unique_ptr<FakeConvolution> convolution;
  if (convolutions > 0) convolution = std::make_unique<FakeConvolution>();
  int step = 0;
  for (int e = 0; e < epochs; ++e) {
    for (int i = 0; i < steps; ++i, ++step) {
      const bool short_batch = short_last && i + 1 == steps;
      const unsigned g = short_batch ? 1 : 2;
      int n = 100 + step;  // the step number (an RNG offset, a learning-rate schedule)
      cuMemcpyHtoDAsync(a, host, short_batch ? 320 : 1024, nullptr);
      void* scale_args[] = {&a, &b, &n};
      cuLaunchKernel(scale, g, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
      for (int c = 0; c < convolutions; ++c) convolution->run(a, b);
      int m = 7;
      void* fill_args[] = {&b, &m};
      cuLaunchKernel(fill, g, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
      // Every log_every steps one more kernel in the middle (what a step that logs adds).
      if (log_every > 0 && (step + 1) % log_every == 0) cuLaunchKernel(scale, 3, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
      cuLaunchKernel(scale, 2 * g, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
      cuMemcpyDtoHAsync(host, b, 1024, nullptr);
      cuStreamSynchronize(nullptr);
      static std::uint32_t clock = 1;
      const unsigned reads = one_of_three(clock);
      for (unsigned r = 0; progress_reads && r < reads; ++r) {
        cuMemcpyDtoHAsync(host + 128, a, 4, nullptr);
        cuStreamSynchronize(nullptr);
      }
    }
    for (int i = 0; i < evals; ++i) {
      cuMemcpyHtoDAsync(a, host, 1024, nullptr);
      int m = 3;
      void* fill_args[] = {&b, &m};
      const int kernels = eval_kernels + (first_eval_differs && i == 0 ? 1 : 0);
      for (int k = 0; k < kernels; ++k) cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
      cuMemcpyDtoHAsync(host, b, 1024, nullptr);
      cuStreamSynchronize(nullptr);
    }
  }
  // What a program can ask nimble run itself (-1: not preloaded).
  using Counter = unsigned long long (*)();
  const auto replayed = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "nimble_run_iterations_replayed"));
  const auto segments = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "nimble_run_segments_launched"));
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("kernels_run=%d graph_launches=%d steps=%d replayed_seen=%lld segments_seen=%lld\n",
              fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"), step,
              replayed ? static_cast<long long>(replayed()) : -1LL, segments ? static_cast<long long>(segments()) : -1LL);
  return 0;
}

// An inference service's loop: batches padded to one of three lengths, drawn at random, each step
// beginning alike (the same input copy and first kernel) and then launching with the bucket's grid.
// `copy_later`: the input copy after the first kernel, so that only the first call is alike.
int buckets(int steps, bool copy_later) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  std::uint32_t traffic = 17;
  for (int i = 0; i < steps; ++i) {
    const unsigned g = 1u << one_of_three(traffic);
    int n = 100 + i;
    void* scale_args[] = {&a, &b, &n};
    int m = 7;
    void* fill_args[] = {&b, &m};
    if (!copy_later) cuMemcpyHtoDAsync(a, host, 1024, nullptr);
    cuLaunchKernel(scale, 1, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
    for (int k = 0; k < 6; ++k) cuLaunchKernel(fill, g, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
    if (copy_later) cuMemcpyHtoDAsync(a, host, 1024, nullptr);
    cuLaunchKernel(scale, 2 * g, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
    cuMemcpyDtoHAsync(host, b, 1024, nullptr);
    cuStreamSynchronize(nullptr);
  }
  using Counter = unsigned long long (*)();
  const auto replayed = reinterpret_cast<Counter>(dlsym(RTLD_DEFAULT, "nimble_run_iterations_replayed"));
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("kernels_run=%d graph_launches=%d steps=%d replayed_seen=%lld\n", fake_driver_count("cuLaunchKernel"),
              fake_driver_count("cuGraphLaunch"), steps, replayed ? static_cast<long long>(replayed()) : -1LL);
  return 0;
}

// A program that captures its own CUDA graph once and launches it every iteration, between an
// input copy and a copy out (as torch.cuda.graph and torch.compile's reduce-overhead do).
// `graph_first`: each iteration begins with the graph launch (right after the last one's sync), so
// a recording begins with the graph's nodes.
int own_graph(int iterations, bool graph_first) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
  int n = 5;
  void* scale_args[] = {&a, &b, &n};
  cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, s, scale_args, nullptr);
  CUgraph graph;
  cuStreamEndCapture(s, &graph);
  CUgraphExec exec;
  cuGraphInstantiateWithFlags(&exec, graph, 0);
  CUgraphNode node;
  std::size_t nodes = 1;
  cuGraphGetNodes(graph, &node, &nodes);
  for (int i = 0; i < iterations; ++i) {
    if (!graph_first) cuMemcpyHtoDAsync(a, host, 1024, s);
    // The program updates its graph between launches (a scalar, as XLA's command buffers do).
    int scalar = 5 + i % 3;
    void* update_args[] = {&a, &b, &scalar};
    CUDA_KERNEL_NODE_PARAMS k{};
    k.func = scale, k.gridDimX = 2, k.gridDimY = k.gridDimZ = 1, k.blockDimX = 64, k.blockDimY = k.blockDimZ = 1;
    k.kernelParams = update_args;
    cuGraphExecKernelNodeSetParams(exec, node, &k);
    cuGraphLaunch(exec, s);
    if (graph_first) cuMemcpyHtoDAsync(a, host, 1024, s);
    end_iteration(fill, b, host, s);
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("kernels_run=%d graph_launches=%d\n", fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  return 0;
}

// A loop whose iteration begins with a host function (JAX marks buffers ready with one), right after
// the sync that ends the iteration before: the automatic range's window opens on it. Then two
// kernels, a copy out and the sync. No capture marks.
int host_function_first(int iterations) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  for (int i = 0; i < iterations; ++i) {
    cuLaunchHostFunc(s, count_host_function, &host_function_calls);
    int n = 100 + i % 5;
    void* scale_args[] = {&a, &b, &n};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, s, scale_args, nullptr);
    end_iteration(fill, b, host, s);
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("host_functions=%d kernels_run=%d graph_launches=%d\n", host_function_calls,
              fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  return 0;
}

// A JAX training step as XLA issues it (H200, 2026-11-28): kernels on the compute stream with a
// host function among them; the inputs copied in on a transfer stream, each copy followed by a host
// function, in an order that changes from step to step (a pool of threads takes turns); the loss
// copied out on one of two streams in alternate steps, then host functions and a sync. Without the
// host functions every step issues the same calls.
int pool_order(int iterations) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  static int scalars[2] = {3, 4};
  CUstream compute, transfer, out[2];
  for (CUstream* s : {&compute, &transfer, &out[0], &out[1]}) cuStreamCreate(s, CU_STREAM_NON_BLOCKING);
  for (int i = 0; i < iterations; ++i) {
    int n = 100 + i % 5;
    void* scale_args[] = {&a, &b, &n};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, compute, scale_args, nullptr);
    cuLaunchHostFunc(compute, count_host_function, &host_function_calls);
    const bool interleaved = __builtin_popcount(static_cast<unsigned>(i * 7 + 3)) & 1;
    cuLaunchHostFunc(transfer, count_host_function, &host_function_calls);
    cuMemcpyHtoDAsync(a, &scalars[0], 4, transfer);
    if (interleaved) cuLaunchHostFunc(transfer, count_host_function, &host_function_calls);
    cuMemcpyHtoDAsync(a + 4, &scalars[1], 4, transfer);
    if (!interleaved) cuLaunchHostFunc(transfer, count_host_function, &host_function_calls);
    cuLaunchHostFunc(transfer, count_host_function, &host_function_calls);
    cuStreamSynchronize(transfer);
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, compute, scale_args, nullptr);
    int m = 7;
    void* fill_args[] = {&b, &m};
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, compute, fill_args, nullptr);
    cuStreamSynchronize(compute);
    cuMemcpyDtoHAsync(host, b, 1024, out[i % 2]);
    cuLaunchHostFunc(out[i % 2], count_host_function, &host_function_calls);
    cuStreamSynchronize(out[i % 2]);
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("host_functions=%d kernels_run=%d graph_launches=%d\n", host_function_calls,
              fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  return 0;
}

// A JAX step with its transfer threads (H200, 2026-11-28): after a start-up that syncs every few
// calls (XLA autotuning), a loop that never syncs. The compute thread waits for the input's event
// (and the last output copy's), launches ten kernels and records the step's event; two pool
// threads take turns copying the next input in on the transfer stream, each after a host function
// and the step that read the last input; another thread copies the result out on one of two streams
// in alternate steps. The two side copies come in an order that changes every step (the parity of
// the step's bit count, which never repeats three times over), so the whole sequence has no
// period; each thread's own calls come in the same order every step. The threads take turns by a
// fixed schedule, so a plain run issues the same calls. With `out_on_compute`, the result is copied
// out on the compute stream in the middle of the next step (after its fifth kernel), ordered with it
// by that stream alone.
int side_threads(int iterations, bool out_on_compute) {
  auto [scale, fill, a, b] = LoopParts();
  static float in[256], out[256];
  CUstream compute, transfer, outs[2];
  for (CUstream* s : {&compute, &transfer, &outs[0], &outs[1]}) cuStreamCreate(s, CU_STREAM_NON_BLOCKING);
  CUevent input_ready, step_done, out_done;
  for (CUevent* e : {&input_ready, &step_done, &out_done}) cuEventCreate(e, CU_EVENT_DISABLE_TIMING);
  int m = 7;
  void* fill_args[] = {&b, &m};
  for (unsigned k = 0; k < 12; ++k) {  // autotuning: a kernel, a copy and a sync, each kernel another
    cuLaunchKernel(fill, 1 + k, 1, 1, 64, 1, 1, 0, compute, fill_args, nullptr);
    cuMemcpyDtoHAsync(out, b, 4, compute);
    cuStreamSynchronize(compute);
  }
  enum Role { Compute, Pool0, Pool1, Output };
  struct Turn {
    Role role;
    int step;
    int half = 0;  // the compute thread's step comes in two halves of five kernels
  };
  std::vector<Turn> schedule;  // who issues next, for which step
  for (int i = 0; i < iterations; ++i) {
    const Turn input{i % 2 ? Pool1 : Pool0, i}, output{Output, i};
    if (i == 0 || out_on_compute) {
      schedule.push_back(input);
    } else if (__builtin_popcount(static_cast<unsigned>(i)) & 1) {
      schedule.insert(schedule.end(), {output, input});
    } else {
      schedule.insert(schedule.end(), {input, output});
    }
    schedule.push_back({Compute, i, 0});
    if (i > 0 && out_on_compute) schedule.push_back(output);
    schedule.push_back({Compute, i, 1});
  }
  schedule.push_back({Output, iterations});
  std::mutex mu;
  std::condition_variable turn;
  std::size_t next = 0;
  auto take_turns = [&](Role role, auto&& act) {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      turn.wait(lock, [&] { return next == schedule.size() || schedule[next].role == role; });
      if (next == schedule.size()) return;
      act(schedule[next].step, schedule[next].half);
      ++next;
      turn.notify_all();
    }
  };
  auto copy_in = [&](int i, int) {
    if (i > 0) cuStreamWaitEvent(transfer, step_done, 0);
    cuLaunchHostFunc(transfer, count_host_function, &host_function_calls);
    cuMemcpyHtoDAsync(a, in, 1024, transfer);
    cuEventRecord(input_ready, transfer);
  };
  auto copy_out = [&](int i, int) {  // the result of step i - 1
    if (out_on_compute) {
      cuMemcpyDtoHAsync(out, b, 1024, compute);
      return;
    }
    cuStreamWaitEvent(outs[i % 2], step_done, 0);
    cuMemcpyDtoHAsync(out, b, 1024, outs[i % 2]);
    cuEventRecord(out_done, outs[i % 2]);
  };
  auto step = [&](int i, int half) {
    if (half == 0) {
      cuStreamWaitEvent(compute, input_ready, 0);
      if (i > 0 && !out_on_compute) cuStreamWaitEvent(compute, out_done, 0);
    }
    for (int k = 5 * half; k < 5 * half + 5; ++k) {
      int n = 100 + k;
      void* scale_args[] = {&a, &b, &n};
      // (The first kernel's grid is its own: a step begins with no other call.)
      cuLaunchKernel(k % 3 ? scale : fill, k ? 2 : 3, 1, 1, 64, 1, 1, 0, compute, k % 3 ? scale_args : fill_args, nullptr);
    }
    if (half == 1) cuEventRecord(step_done, compute);
  };
  std::thread pool0([&] { take_turns(Pool0, copy_in); });
  std::thread pool1([&] { take_turns(Pool1, copy_in); });
  std::thread output([&] { take_turns(Output, copy_out); });
  take_turns(Compute, step);
  pool0.join();
  pool1.join();
  output.join();
  cuCtxSynchronize();
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("host_functions=%d kernels_run=%d graph_launches=%d\n", host_function_calls,
              fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  return 0;
}

// A program that builds its own graph node by node, as XLA's command buffers do: a memset and a
// kernel with no order between them, a child graph after both, a host function, an empty node;
// every iteration updates the first kernel's scalar in the executable graph and launches it
// between a copy in and a copy out; iteration 1 is bracketed by cuProfilerStart/Stop.
int host_calls = 0;
void CUDA_CB count_host_call(void*) { ++host_calls; }

int program_graph(int iterations) {
  auto [scale, fill, a, b] = LoopParts();
  CUdeviceptr c = 0;
  cuMemAlloc(&c, 1024);
  static float host[256];
  CUstream s;
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  CUgraph graph, child;
  cuGraphCreate(&graph, 0);
  cuGraphCreate(&child, 0);
  int n = 5, m = 7;
  void* scale_args[] = {&a, &b, &n};
  void* child_args[] = {&b, &c, &n};
  void* fill_args[] = {&c, &m};
  CUDA_KERNEL_NODE_PARAMS k{};
  k.func = scale, k.gridDimX = 2, k.gridDimY = k.gridDimZ = 1, k.blockDimX = 64, k.blockDimY = k.blockDimZ = 1;
  k.kernelParams = child_args;
  CUgraphNode inner;
  cuGraphAddKernelNode(&inner, child, nullptr, 0, &k);
  CUgraphNode clear, first, fill_node, nested, callback, done;
  CUDA_MEMSET_NODE_PARAMS ms{};
  ms.dst = c, ms.elementSize = 4, ms.width = 256, ms.height = 1, ms.value = 0;
  cuGraphAddMemsetNode(&clear, graph, nullptr, 0, &ms, nullptr);
  k.kernelParams = scale_args;
  cuGraphAddKernelNode(&first, graph, nullptr, 0, &k);
  k.func = fill, k.kernelParams = fill_args;
  cuGraphAddKernelNode(&fill_node, graph, &clear, 1, &k);
  const CUgraphNode both[] = {first, fill_node};
  cuGraphAddChildGraphNode(&nested, graph, both, 2, child);
  CUDA_HOST_NODE_PARAMS hp{count_host_call, nullptr};
  cuGraphAddHostNode(&callback, graph, &nested, 1, &hp);
  cuGraphAddEmptyNode(&done, graph, &callback, 1);
  CUgraphExec exec;
  cuGraphInstantiateWithFlags(&exec, graph, 0);
  if (std::getenv("PROBE_GRAPH_UPDATE")) {
    CUgraphExecUpdateResultInfo info{};
    cuGraphExecUpdate(exec, graph, &info);
  }
  for (int i = 0; i < iterations; ++i) {
    if (i == 1) cuProfilerStart();
    cuMemcpyHtoDAsync(a, host, 1024, s);
    int changed = 100 + i;  // as XLA updates a node whose buffers or scalars changed
    void* update_args[] = {&a, &b, &changed};
    k.func = scale, k.kernelParams = update_args;
    cuGraphExecKernelNodeSetParams(exec, first, &k);
    cuGraphLaunch(exec, s);
    cuMemcpyDtoHAsync(host, c, 1024, s);
    cuStreamSynchronize(s);
    if (i == 1) cuProfilerStop();
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("graph_launches=%d host_calls=%d\n", fake_driver_count("cuGraphLaunch"), host_calls);
  return 0;
}

std::uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(t.tv_nsec);
}

// The overhead probe's iterations [from, to): `kernels` launches (scale and fill alternating;
// scale's scalar changes every iteration when `changing`, its grid when `unrepeating`: no period
// ever repeats), a copy out and a sync; the profiler API brackets iterations `bracket_from` to
// `bracket_to` (-1: left open).
struct OverheadLoop {
  LoopParts parts;
  int kernels, bracket_from, bracket_to;
  bool changing, unrepeating = false;
  // > 0: every kernel's scalar cycles through this many values, one per iteration (as buffers
  // rotating among a few sets move every kernel's arguments), and iteration 1's are its own.
  int period = 0;
  // > 0: after every this many launches the program records an event and makes the stream wait
  // for it (cuDNN's RNN orders its internal streams so, about once per kernel).
  int events_every = 0;
  // With `unrepeating`: iterations from this one on repeat (a loop after set-up that never does).
  int repeats_from = 1 << 30;
  // > 0: after every this many launches a small copy to the host and a sync, as a mixture of
  // experts' routing reads each expert's token count (torch.where); `routed`: scale's grid follows
  // that data, one of 256 values drawn each time, so its shapes rarely repeat in order.
  int syncs_every = 0;
  bool routed = false;
  bool routing_repeats = false;  // every iteration routes alike (its shapes come again each iteration)
  std::uint32_t routing = 1;
  CUevent event = nullptr;
  void run(int from, int to) {
    static float host[256];
    if (events_every > 0 && !event) cuEventCreate(&event, 0);
    for (int i = from; i < to; ++i) {
      if (i == bracket_from) cuProfilerStart();
      int n = changing ? 100 + i : 100;
      int m = 7;
      if (routing_repeats) routing = 1;
      if (period > 0) n = m = i == 1 ? 1000 : 100 + i % period;
      void* scale_args[] = {&parts.a, &parts.b, &n};
      void* fill_args[] = {&parts.b, &m};
      for (int k = 0; k < kernels; ++k) {
        if (k % 2 == 0) {
          unsigned grid = unrepeating && i < repeats_from ? 2 + static_cast<unsigned>(i) : 2;
          if (routed) {
            routing = routing * 1664525u + 1013904223u;
            grid = 2 + (routing >> 24);
          }
          cuLaunchKernel(parts.scale, grid, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
        } else {
          cuLaunchKernel(parts.fill, 2, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
        }
        if (events_every > 0 && k % events_every == events_every - 1) {
          cuEventRecord(event, nullptr);
          cuStreamWaitEvent(nullptr, event, 0);
        }
        if (syncs_every > 0 && k % syncs_every == syncs_every - 1) {
          cuMemcpyDtoHAsync(host, parts.b, 8, nullptr);
          cuStreamSynchronize(nullptr);
        }
      }
      cuMemcpyDtoHAsync(host, parts.b, 1024, nullptr);
      cuStreamSynchronize(nullptr);
      if (i == bracket_to) cuProfilerStop();
    }
  }
};

// The second half of the overhead probe, in a function of its own so that callgrind can count
// just it (`--collect-atstart=no --toggle-collect='*overhead_second_half*'`, scripts/host_cost.sh):
// by then a trial has decided.
__attribute__((noinline)) void overhead_second_half(OverheadLoop& loop, int half, int iterations) {
  loop.run(half, iterations);
}

// nimble run's cost per call on the CPU: the loop above, iteration 1 bracketed by
// cuProfilerStart/Stop. Prints the mean nanoseconds per launch over the iterations after the first
// 10 (wall clock and this thread's CPU time, which a loaded machine changes less), and the CPU time
// over the second half alone. Run it idle and under `nimble run` to compare. With `record_all`,
// every iteration is bracketed instead (what describing each call costs while a window records).
int overhead(int iterations, int kernels, bool changing, bool record_all = false, bool unrepeating = false,
             int period = 0, int events_every = 0, int repeats_from = 1 << 30, int syncs_every = 0, bool routed = false,
             bool routing_repeats = false) {
  using Clock = std::chrono::steady_clock;
  // With record_all the bracket closes after the timing (what writing the trace costs is not a call's).
  OverheadLoop loop{LoopParts(), kernels, record_all ? 0 : 1, record_all ? -1 : 1, changing, unrepeating, period,
                    events_every, repeats_from, syncs_every, routed, routing_repeats};
  const int half = iterations / 2;
  loop.run(0, 10);
  const Clock::time_point start = Clock::now();
  const std::uint64_t cpu_start = thread_cpu_ns();
  loop.run(10, half);
  const std::uint64_t cpu_half = thread_cpu_ns();
  overhead_second_half(loop, half, iterations);
  const std::uint64_t cpu_end = thread_cpu_ns();  // before the trace is written
  const Clock::time_point end = Clock::now();
  if (record_all) cuProfilerStop();
  const double ns = std::chrono::duration<double, std::nano>(end - start).count();
  const double launches = static_cast<double>(iterations - 10) * kernels;
  const double late_launches = static_cast<double>(iterations - half) * kernels;
  std::printf("ns_per_launch=%.1f cpu_ns_per_launch=%.1f late_cpu_ns_per_launch=%.1f\n", ns / launches,
              static_cast<double>(cpu_end - cpu_start) / launches, static_cast<double>(cpu_end - cpu_half) / late_launches);
  std::printf("kernels_run=%d graph_launches=%d execs_destroyed=%d\n", fake_driver_count("cuLaunchKernel"),
              fake_driver_count("cuGraphLaunch"), fake_driver_count("cuGraphExecDestroy"));
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  return 0;
}

// An inference service's step as bucketed_inference.py makes it (H200 trace): a fill kernel begins
// the step and comes back 14 times inside it, each time before a kernel whose grid follows the
// batch's length (one of three, drawn at random); the second call (a random-number kernel) is the
// step's own; the result is copied to the host and synchronised at the end. Prints this thread's
// CPU time per launch over the second half of the steps (service_steps, for callgrind too).
struct ServiceLoop {
  CUfunction scale, fill;
  CUdeviceptr a, b;
  std::uint32_t traffic = 17;
  float host[256] = {};
  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      const unsigned g = 1u << one_of_three(traffic);
      int n = 100 + i, m = 7;
      void* scale_args[] = {&a, &b, &n};
      void* fill_args[] = {&b, &m};
      cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
      cuLaunchKernel(scale, 1, 1, 1, 32, 1, 1, 0, nullptr, scale_args, nullptr);
      for (int k = 0; k < 14; ++k) {
        cuLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
        cuLaunchKernel(scale, g, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
      }
      cuMemcpyDtoHAsync(host, b, 1024, nullptr);
      cuStreamSynchronize(nullptr);
    }
  }
};

__attribute__((noinline)) void service_steps(ServiceLoop& loop, int steps) { loop.run(steps); }

int service(int steps) {
  auto [scale, fill, a, b] = LoopParts();
  ServiceLoop loop{scale, fill, a, b};
  loop.run(steps / 2);
  const std::uint64_t cpu_start = thread_cpu_ns();
  service_steps(loop, steps - steps / 2);
  const std::uint64_t cpu_end = thread_cpu_ns();
  std::printf("late_cpu_ns_per_launch=%.1f\n", static_cast<double>(cpu_end - cpu_start) / ((steps - steps / 2) * 30.0));
  std::printf("kernels_run=%d graph_launches=%d\n", fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  return 0;
}

// run_loop --sync-every's loop (tests/apps) on the fake driver: after a set-up that launches, uploads
// and synchronises, each iteration copies fresh host data in and launches 15 kernels; every
// `reads_every` iterations a kernel of a drawn launch shape (a loss over a data-dependent number of
// rows), then the result read and synchronised. The stretch from one read to the next never
// repeats; the iteration does.
int rare_reads(int iterations, int reads_every) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256], input[256];
  std::uint32_t routing = 1;
  int init = 3;
  void* init_args[] = {&a, &init};
  cuLaunchKernel(fill, 8, 1, 1, 128, 1, 1, 0, nullptr, init_args, nullptr);
  cuMemcpyHtoDAsync(b, host, sizeof host, nullptr);
  cuCtxSynchronize();
  for (int i = 0; i < iterations; ++i) {
    input[0] = static_cast<float>(i);
    cuMemcpyHtoDAsync(a, input, sizeof input, nullptr);
    int n = 100, m = 7;
    void* scale_args[] = {&a, &b, &n};
    void* fill_args[] = {&b, &m};
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
    for (unsigned k = 0; k < 14; ++k) cuLaunchKernel(scale, 2 + k, 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
    if (i % reads_every != reads_every - 1 && i + 1 != iterations) continue;
    routing = routing * 1664525u + 1013904223u;
    cuLaunchKernel(scale, 100 + (routing >> 24), 1, 1, 64, 1, 1, 0, nullptr, scale_args, nullptr);
    cuMemcpyDtoHAsync(host, b, 1024, nullptr);
    cuStreamSynchronize(nullptr);
  }
  std::printf("kernels_run=%d graph_launches=%d\n", fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  return 0;
}

// A step around an inner loop, as a seq2seq model's hand-stepped recurrence makes it (the GRU
// seq2seq on the H200): 10 kernels, then 24 time steps of 12 kernels each, every time step on
// buffers of its own (the activations autograd keeps), then 20 kernels; the loss copied out and
// synchronised every 16 steps. Every time step's buffers are new (the caching allocator's blocks
// drift when zero_grad() comes between the forward and the backward pass): nothing is replayed,
// but the step is what nimble run should find once its time steps were recorded and dropped.
int nested(int steps) {
  auto [scale, fill, a, b] = LoopParts();
  CUdeviceptr activations = 0;
  constexpr int kSlots = 1 << 16;
  cuMemAlloc(&activations, kSlots * 256);
  int slot = 0;
  static float host[256];
  for (int i = 0; i < steps; ++i) {
    int n = 3;
    void* head_args[] = {&a, &b, &n};
    for (unsigned k = 0; k < 10; ++k) cuLaunchKernel(scale, 100 + k, 1, 1, 32, 1, 1, 0, nullptr, head_args, nullptr);
    for (int t = 0; t < 24; ++t) {
      for (unsigned k = 0; k < 12; ++k) {
        CUdeviceptr own = activations + static_cast<CUdeviceptr>(slot++ % kSlots) * 256;
        void* args[] = {&a, &own, &n};
        cuLaunchKernel(scale, 200 + k, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
      }
    }
    for (unsigned k = 0; k < 20; ++k) cuLaunchKernel(scale, 300 + k, 1, 1, 32, 1, 1, 0, nullptr, head_args, nullptr);
    if (i % 16 == 15) {
      cuMemcpyDtoHAsync(host, b, 1024, nullptr);
      cuStreamSynchronize(nullptr);
    }
  }
  std::printf("kernels_run=%d graph_launches=%d\n", fake_driver_count("cuLaunchKernel"), fake_driver_count("cuGraphLaunch"));
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  return 0;
}

// A single-stream loop whose tensors come from a stream-ordered pool, as under PyTorch's
// backend:cudaMallocAsync: each iteration allocates a new input before the last one is freed (so
// two addresses alternate), a temporary that is freed right after the kernels that use it, one
// more kernel, and copies the result out; iteration 1 is bracketed by cuProfilerStart/Stop. Prints the work digest
// and how many kernels ran with memory that had been freed (the fake pool hands freed blocks out
// again at once).
int pool_loop(int iterations) {
  auto [scale, fill, a, b] = LoopParts();
  static float host[256];
  CUdeviceptr previous = 0;
  for (int i = 0; i < iterations; ++i) {
    if (i == 1) cuProfilerStart();
    CUdeviceptr x = 0, t = 0;
    cuMemAllocAsync(&x, 4096, nullptr);
    int m = 5, n = 3 + i;
    void* fill_x[] = {&x, &m};
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, nullptr, fill_x, nullptr);
    cuMemAllocAsync(&t, 2048, nullptr);
    void* x_to_t[] = {&x, &t, &n};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, x_to_t, nullptr);
    void* t_to_b[] = {&t, &b, &m};
    cuLaunchKernel(scale, 2, 1, 1, 64, 1, 1, 0, nullptr, t_to_b, nullptr);
    cuMemFreeAsync(t, nullptr);
    if (previous) cuMemFreeAsync(previous, nullptr);
    previous = x;
    void* fill_b[] = {&b, &m};  // more work after the frees, before anything is launched
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, nullptr, fill_b, nullptr);
    cuMemcpyDtoHAsync(host, b, 1024, nullptr);
    cuStreamSynchronize(nullptr);
    if (i == 1) cuProfilerStop();
  }
  std::printf("work=%016llx\n", static_cast<unsigned long long>(fake_driver_work_digest()));
  std::printf("kernels_run=%d graph_launches=%d use_after_free=%d\n", fake_driver_count("cuLaunchKernel"),
              fake_driver_count("cuGraphLaunch"), fake_driver_use_after_free());
  return 0;
}

// cuDNN-style calls in a single-stream loop (the fake cuDNN): per iteration a kernel of the
// program's own, a cudnnBackendExecute whose variant pack (created, set, finalized, executed and
// destroyed every time, as PyTorch does) names an input buffer that alternates between two,
// a copy out and a sync; iteration 1 bracketed by cuProfilerStart/Stop. Prints the work digest
// (every kernel that ran, with its arguments, in order) and how many executions reached cuDNN.
int library_loop(int iterations) {
  FakeConvolution convolution;
  CUdeviceptr in[2], out;
  cuMemAlloc(&in[0], 1024);
  cuMemAlloc(&in[1], 1024);
  cuMemAlloc(&out, 1024);
  static float host[256];
  CUfunction fill = fake_driver_function("fill");
  for (int i = 0; i < iterations; ++i) {
    if (i == 1) cuProfilerStart();
    CUdeviceptr x = in[i % 2];
    int m = 5;
    void* fill_args[] = {&x, &m};
    cuLaunchKernel(fill, 2, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr);
    convolution.run(x, out);
    cuMemcpyDtoHAsync(host, out, 1024, nullptr);
    cuStreamSynchronize(nullptr);
    if (i == 1) cuProfilerStop();
  }
  std::printf("work=%016llx kernels=%llu\n", static_cast<unsigned long long>(fake_driver_work_digest()),
              static_cast<unsigned long long>(fake_driver_work_kernels()));
  std::printf("inside_ns=%lld\n", host_ns_inside_nimble());
  std::printf("kernels_run=%d graph_launches=%d executes=%d\n", fake_driver_count("cuLaunchKernel"),
              fake_driver_count("cuGraphLaunch"), fake_cudnn_executes());
  return failures ? 1 : 0;
}

// Nanoseconds per cuLaunchKernel through nimble's exported wrapper and straight to the driver.
int bench() {
  using Clock = std::chrono::steady_clock;
  CUfunction f = fake_driver_function("noargs");
  auto direct = reinterpret_cast<PFN_cuLaunchKernel_v4000>(fake_driver_direct_launch());
  auto time = [&](PFN_cuLaunchKernel_v4000 fn) {
    const int n = 2000000;
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) fn(f, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
    return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / n;
  };
  time(cuLaunchKernel);  // warm up, resolve the real function
  double wrapped = 1e9, plain = 1e9;
  for (int round = 0; round < 5; ++round) {
    wrapped = std::min(wrapped, time(cuLaunchKernel));
    plain = std::min(plain, time(direct));
  }
  std::printf("wrapped_ns=%.2f direct_ns=%.2f\n", wrapped, plain);
  return 0;
}

}  // namespace

// Warm-up that repeats a pattern and then moves on (as XLA's autotuning does): 16 fills each
// followed by a sync (a period of 2 tasks, found after 32), then 4 times a fill, a scale and a
// sync (the window opened on the 17th fill ends on a scale: it does not repeat the period found),
// then the steady iteration of `record`.
int warmup_then_steady(int iterations) {
  auto [scale, fill, a, b] = LoopParts();
  int m = 7, n = 5;
  void* fill_args[] = {&b, &m};
  void* scale_args[] = {&a, &b, &n};
  for (int i = 0; i < 20; ++i) {
    cuLaunchKernel(fill, 1, 1, 1, 32, 1, 1, 0, nullptr, fill_args, nullptr);
    if (i >= 16) cuLaunchKernel(scale, 1, 1, 1, 32, 1, 1, 0, nullptr, scale_args, nullptr);
    cuStreamSynchronize(nullptr);
  }
  return record(iterations, false);
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "funnel") return funnel();
  if (mode == "record") return record(3, true);
  if (mode == "auto") return record(12, false);
  if (mode == "warmup-then-steady") return warmup_then_steady(12);
  if (mode == "warmup-then-exit") return warmup_then_steady(0);
  if (mode == "polled") return polled(16);
  if (mode == "interleaved") return interleaved(20, false);
  if (mode == "interleaved-threads") return interleaved(200, true);
  if (mode == "exit-open") return exit_while_open();
  if (mode == "fork") return fork_child_does_not_write();
  if (mode == "bench") return bench();
  if (mode == "loop") return loop(8, -1);
  if (mode == "loop-change") return loop(8, 5);
  if (mode == "loop-until-replayed") return loop_until_replayed(argc > 2 ? std::atoi(argv[2]) : 0);
  if (mode == "loop-until-replayed-context-sync") return loop_until_replayed(argc > 2 ? std::atoi(argv[2]) : 0, true);
  if (mode == "loop-until-replayed-own-capture") {
    return loop_until_replayed(argc > 2 ? std::atoi(argv[2]) : 0, false, true);
  }
  if (mode == "loop-until-replayed-stream-ops") return loop_until_replayed(argc > 2 ? std::atoi(argv[2]) : 0, false, false, 4);
  if (mode == "loop-until-replayed-stream-ops-always") {
    return loop_until_replayed(argc > 2 ? std::atoi(argv[2]) : 0, false, false, 1);
  }
  if (mode == "loop-events") return loop_events(8);
  if (mode == "loop-streams") return loop_streams(8, false);
  if (mode == "loop-streams-per-thread") return loop_streams(8, true);
  if (mode == "loop-collective") return loop_streams(8, false, true);
  if (mode == "overhead") return overhead(2000, 200, true);
  if (mode == "library") return library_loop(40);
  if (mode == "library-long") return library_loop(400);  // long enough for the process guard's spans
  if (mode == "pool") return pool_loop(12);
  if (mode == "overhead-same") return overhead(2000, 200, false);
  if (mode == "overhead-unrepeating") return overhead(2000, 200, true, false, true);
  if (mode == "unrepeating-few") return overhead(20, 200, true, false, true);
  // Every kernel's argument cycles through three values (iteration 1, the recorded one, has its
  // own), or is new every iteration: buffers rotating among a few sets, or always moving.
  if (mode == "overhead-rotating") return overhead(400, 200, false, false, false, 3);
  if (mode == "overhead-moving") return overhead(400, 200, false, false, false, 1 << 20);
  if (mode == "overhead-events") return overhead(2000, 200, false, false, false, 0, 2);
  // A mixture of experts' steps (moe_train.py): a copy and a sync after every sixth launch, and
  // launch shapes that follow the routing, so no period repeats and every sync is a place to look.
  if (mode == "overhead-routed") return overhead(2000, 200, false, false, false, 0, 0, 1 << 30, 6, true);
  // The same, every iteration routed alike: a period of 266 calls with 33 syncs inside.
  if (mode == "routed-loop") return overhead(400, 200, false, false, false, 0, 0, 1 << 30, 6, true, true);
  // Iterations of 4 launches, a copy and a sync (6 calls): shorter than nimble run's minimum; as
  // many launches in the second half as the modes above.
  if (mode == "service") return service(argc > 2 ? std::atoi(argv[2]) : 2000);
  if (mode == "nested") return nested(argc > 2 ? std::atoi(argv[2]) : 300);
  if (mode == "rare-reads") return rare_reads(argc > 2 ? std::atoi(argv[2]) : 6000, 128);
  if (mode == "overhead-short") return overhead(argc > 2 ? std::atoi(argv[2]) : 100000, 4, false);
  // 1000 iterations whose launch shapes never repeat, then 2000 that do.
  if (mode == "unrepeating-then-loop") return overhead(3000, 50, false, false, true, 0, 0, 1000);
  if (mode == "recording-cost") return overhead(60, 500, true, true);
  if (mode == "program") return program(2, 30, 20);
  // Epochs as the corpus' training script has them: a short last batch and a short eval pass.
  // (Each eval step launches 10 kernels, so three of them are long enough to be a period.)
  if (mode == "epochs") return program(8, 11, 4, true, 10);
  if (mode == "epochs-first-eval-differs") return program(8, 11, 4, true, 10, 0, true);
  // With six cuDNN calls in each training step (nimble run skips them once known) and an eval
  // pass of two steps (too short to be a period).
  if (mode == "epochs-library") return program(8, 11, 2, true, 10, 6);
  // 300 training steps of which every tenth launches one kernel more, after the second.
  if (mode == "logging-step") return program(1, 300, 0, false, 1, 0, false, 10);
  if (mode == "progress-reads") return program(1, 300, 0, false, 1, 0, false, 0, true);
  if (mode == "own-graph") return own_graph(60, false);
  if (mode == "host-function-first") return host_function_first(argc > 2 ? std::atoi(argv[2]) : 60);
  if (mode == "pool-order") return pool_order(argc > 2 ? std::atoi(argv[2]) : 60);
  if (mode == "side-threads") return side_threads(argc > 2 ? std::atoi(argv[2]) : 300, false);
  if (mode == "side-threads-on-compute") return side_threads(argc > 2 ? std::atoi(argv[2]) : 300, true);
  if (mode == "own-graph-first") return own_graph(60, true);
  if (mode == "program-graph") return program_graph(4);
  if (mode == "buckets") return buckets(argc > 2 ? std::atoi(argv[2]) : 300, false);
  if (mode == "buckets-second") return buckets(argc > 2 ? std::atoi(argv[2]) : 300, true);
  std::fprintf(stderr, "usage: probe_app funnel|record|auto|exit-open|fork|bench|loop|loop-change|overhead|overhead-same|overhead-unrepeating|unrepeating-few|overhead-events|unrepeating-then-loop|progress-reads|library|library-long|pool|program|own-graph|own-graph-first|program-graph|nested\n");
  return 2;
}
