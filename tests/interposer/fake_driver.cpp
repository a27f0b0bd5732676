// A fake libcuda for CPU tests: enough of the driver API for libnimble to resolve, forward to and
// record from, with no GPU. Every entry point logs its exported name so tests can check which
// variant a wrapper reached. Selected with NIMBLE_LIBCUDA=<path of this library>.
#include <cuda.h>
#undef cuGetProcAddress  // define the v1 symbol itself, not the header's alias for _v2

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fake_driver.hpp"

namespace {

std::mutex g_mu;
std::string g_last_call;
std::map<std::string, int> g_counts;
std::uint64_t g_next_address = 0x7f0000000000ULL;
std::uint64_t g_next_handle = 0x1000;
std::map<CUdeviceptr, std::size_t> g_allocations;  // cuMemAlloc: base -> size

using fake::called;
using fake::Entry;

// Fake kernels: a CUfunction is a pointer to one of these.
struct FakeKernel {
  const char* mangled;
  std::vector<std::pair<size_t, size_t>> params;  // offset, size
};
FakeKernel g_scale{"_Z5scalePKfPfi", {{0, 8}, {8, 8}, {16, 4}}};
FakeKernel g_fill{"_Z4fillPfi", {{0, 8}, {8, 4}}};
FakeKernel g_noargs{"noargs_kernel", {}};
// As NCCL names its kernels, and as NCCL declares their one argument: 4 KB of storage, of which a
// launch passes (an `extra` buffer) only the bytes it uses.
FakeKernel g_collective{"ncclDevKernel_AllReduce_Sum_f32_RING_LL", {{0, 4096}}};

}  // namespace

void fake::called(const char* name) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_last_call = name;
  // Found by the name's address (callers pass literals) at a cost that does not grow with the
  // functions called so far: scripts/host_cost.sh compares processes that called different sets.
  static auto* by_address = new std::unordered_map<const char*, int*>();
  auto it = by_address->find(name);
  if (it == by_address->end()) it = by_address->emplace(name, &g_counts[name]).first;  // map nodes stay put
  ++*it->second;
}

namespace {
std::uint64_t g_work_digest = 0xcbf29ce484222325ULL;
std::uint64_t g_work_kernels = 0;
// A stream-ordered pool: freed blocks by size (the last freed is handed out first), and the
// blocks freed and not handed out again. A kernel that runs with one of those in its arguments
// ran after its memory was freed: counted.
std::map<std::size_t, std::vector<CUdeviceptr>> g_pool;
std::map<CUdeviceptr, std::size_t> g_block_sizes;
std::set<CUdeviceptr> g_freed_blocks;
int g_use_after_free = 0;

int env_int(const char* name, int otherwise) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : otherwise;
}
}  // namespace

std::vector<std::uint8_t> fake::kernel_args(CUfunction f, void** params, void** extra) {
  std::vector<std::uint8_t> bytes;
  if (!f) return bytes;
  if (extra) {  // {BUFFER_POINTER, p, BUFFER_SIZE, &size, END}
    const auto* p = static_cast<const std::uint8_t*>(extra[1]);
    const std::size_t size = *static_cast<const std::size_t*>(extra[3]);
    return std::vector<std::uint8_t>(p, p + size);
  }
  const auto& layout = reinterpret_cast<FakeKernel*>(f)->params;
  for (std::size_t i = 0; i < layout.size() && params; ++i) {
    bytes.resize(layout[i].first + layout[i].second);
    std::memcpy(bytes.data() + layout[i].first, params[i], layout[i].second);
  }
  return bytes;
}

void fake::ran_kernel(CUfunction f, const std::vector<std::uint8_t>& args, CUstream stream) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto step = [](std::uint64_t h, std::uint8_t byte) { return (h ^ byte) * 0x100000001b3ULL; };
  const auto handle = reinterpret_cast<std::uintptr_t>(stream);
  if (handle > 0x2) {  // a created stream
    for (int b = 0; b < 8; ++b) g_work_digest = step(g_work_digest, static_cast<std::uint8_t>(handle >> (8 * b)));
  }
  // By name: the kernel's address changes from process to process.
  for (const char* c = reinterpret_cast<FakeKernel*>(f)->mangled; *c; ++c) {
    g_work_digest = step(g_work_digest, static_cast<std::uint8_t>(*c));
  }
  for (std::uint8_t b : args) g_work_digest = step(g_work_digest, b);
  ++g_work_kernels;
  for (std::size_t w = 0; w + 8 <= args.size(); w += 8) {
    CUdeviceptr word = 0;
    std::memcpy(&word, args.data() + w, 8);
    if (g_freed_blocks.count(word)) ++g_use_after_free;
  }
  static const bool log = std::getenv("FAKE_DRIVER_LOG") != nullptr;  // once: a lookup per launch would swamp host-cost counts
  if (log) {
    std::fprintf(stderr, "ran %s", reinterpret_cast<FakeKernel*>(f)->mangled);
    for (std::uint8_t b : args) std::fprintf(stderr, "%02x", b);
    std::fprintf(stderr, "\n");
  }
}

void fake::spend_host_time(int microseconds) {
  if (microseconds <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(microseconds);
  while (std::chrono::steady_clock::now() < until) {
  }
}
int fake::env_microseconds(const char* variable) { return env_int(variable, 0); }

extern "C" {

// Test helpers (not part of the driver API).
const char* fake_driver_last_call() { return g_last_call.c_str(); }
std::uint64_t fake_driver_work_digest() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_work_digest;
}
int fake_driver_use_after_free() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_use_after_free;
}
std::uint64_t fake_driver_work_kernels() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_work_kernels;
}
int fake_driver_count(const char* name) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_counts.find(name);
  return it == g_counts.end() ? 0 : it->second;
}
CUfunction fake_driver_function(const char* which) {
  if (std::strcmp(which, "scale") == 0) return reinterpret_cast<CUfunction>(&g_scale);
  if (std::strcmp(which, "fill") == 0) return reinterpret_cast<CUfunction>(&g_fill);
  if (std::strcmp(which, "collective") == 0) return reinterpret_cast<CUfunction>(&g_collective);
  return reinterpret_cast<CUfunction>(&g_noargs);
}

CUresult cuInit(unsigned) { called("cuInit"); return CUDA_SUCCESS; }
CUresult cuDriverGetVersion(int* v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuCtxGetDevice(CUdevice* d) { *d = 0; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "Fake GPU", len);
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute, CUdevice) { *v = 9; return CUDA_SUCCESS; }

CUresult cuFuncGetName(const char** name, CUfunction f) {
  *name = reinterpret_cast<FakeKernel*>(f)->mangled;
  return CUDA_SUCCESS;
}
CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t* offset, size_t* size) {
  const auto& p = reinterpret_cast<FakeKernel*>(f)->params;
  if (i >= p.size()) return CUDA_ERROR_INVALID_VALUE;
  *offset = p[i].first;
  *size = p[i].second;
  return CUDA_SUCCESS;
}

// With FAKE_NCCL_RENDEZVOUS=DIR, the fake collective behaves like NCCL's across processes: each
// rank (RANK of WORLD_SIZE) that runs its k-th collective waits until every rank has run its
// k-th. A rank whose collective went into a graph instead never arrives, and the others give up
// after FAKE_NCCL_TIMEOUT_MS (default 10 s) with a message and exit status 3: a deadlock.
namespace {
void collective_rendezvous() {
  static int count = 0;
  const char* dir = std::getenv("FAKE_NCCL_RENDEZVOUS");
  if (!dir) return;
  const int rank = env_int("RANK", 0), ranks = env_int("WORLD_SIZE", 1);
  ++count;
  const std::string mine = std::string(dir) + "/rank" + std::to_string(rank);
  {
    std::ofstream(mine + ".tmp") << count;
  }
  std::rename((mine + ".tmp").c_str(), mine.c_str());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(env_int("FAKE_NCCL_TIMEOUT_MS", 10000));
  for (int peer = 0; peer < ranks; ++peer) {
    for (;;) {
      int seen = 0;
      std::ifstream(std::string(dir) + "/rank" + std::to_string(peer)) >> seen;
      if (seen >= count) break;
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "fake NCCL: rank %d waited for rank %d in collective %d: deadlock\n", rank, peer, count);
        std::exit(3);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}
}  // namespace

// The same work as cuLaunchKernel, reachable without nimble in between (for the overhead test).
static CUresult direct_launch(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream s, void** params, void** extra) {
  called("cuLaunchKernel");
  fake::ran_kernel(f, fake::kernel_args(f, params, extra), s);
  return CUDA_SUCCESS;
}
void* fake_driver_direct_launch() { return reinterpret_cast<void*>(&direct_launch); }

#define FAKE_LAUNCH(name)                                                                      \
  CUresult name(CUfunction f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                CUstream s, void** params, void** extra) {                                     \
    const bool capture = s && fake::capturing(s);                                              \
    called(capture ? "captured" : #name);                                                      \
    if (!capture && f == reinterpret_cast<CUfunction>(&g_collective)) {                       \
      called("collective_run");                                                                \
      collective_rendezvous();                                                                 \
    }                                                                                          \
    if (capture) {                                                                             \
      fake::captured(s, f, fake::kernel_args(f, params, extra));                               \
    } else {                                                                                   \
      static const int us = fake::env_microseconds("FAKE_DRIVER_LAUNCH_US");                   \
      fake::spend_host_time(us);                                                               \
      fake::ran_kernel(f, fake::kernel_args(f, params, extra), s);                             \
    }                                                                                          \
    return CUDA_SUCCESS;                                                                       \
  }
FAKE_LAUNCH(cuLaunchKernel)
FAKE_LAUNCH(cuLaunchKernel_ptsz)
FAKE_LAUNCH(fake_cuLaunchKernel_future)  // a variant "a later driver" adds; nimble must not wrap it
#undef FAKE_LAUNCH

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  called("cuMemAlloc_v2");
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_mu);
  *p = g_next_address;
  g_next_address += (bytes + 0xfffff) & ~std::uint64_t{0xfffff};
  g_allocations[*p] = bytes;
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr) { called("cuMemFree_v2"); return CUDA_SUCCESS; }
CUresult cuMemAllocAsync(CUdeviceptr* p, size_t bytes, CUstream) {
  called("cuMemAllocAsync");
  std::lock_guard<std::mutex> lock(g_mu);
  auto& free = g_pool[bytes];
  if (!free.empty()) {
    *p = free.back();
    free.pop_back();
    g_freed_blocks.erase(*p);
    return CUDA_SUCCESS;
  }
  *p = g_next_address;
  g_next_address += (bytes + 0xfffff) & ~std::uint64_t{0xfffff};
  g_block_sizes[*p] = bytes;
  return CUDA_SUCCESS;
}
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream) {
  called("cuMemFreeAsync");
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_block_sizes.find(p);
  if (it == g_block_sizes.end() || g_freed_blocks.count(p)) return CUDA_ERROR_INVALID_VALUE;
  g_pool[it->second].push_back(p);
  g_freed_blocks.insert(p);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr, const void*, size_t, CUstream) {
  called("cuMemcpyHtoDAsync_v2");
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void*, CUdeviceptr, size_t, CUstream) {
  called("cuMemcpyDtoHAsync_v2");
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t) { called("cuMemcpyDtoH_v2"); return CUDA_SUCCESS; }
CUresult cuMemsetD32Async(CUdeviceptr, unsigned, size_t, CUstream s) {
  const bool capture = s && fake::capturing(s);
  called(capture ? "captured" : "cuMemsetD32Async");
  if (capture) fake::captured(s, nullptr, {});
  return CUDA_SUCCESS;
}
CUresult cuPointerGetAttribute(void* out, CUpointer_attribute attribute, CUdeviceptr p) {
  if (attribute == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR || attribute == CU_POINTER_ATTRIBUTE_RANGE_SIZE) {
    std::lock_guard<std::mutex> lock(g_mu);  // cuMemAlloc's allocations
    auto it = g_allocations.upper_bound(p);
    if (it == g_allocations.begin() || p - std::prev(it)->first >= std::prev(it)->second) return CUDA_ERROR_INVALID_VALUE;
    --it;
    if (attribute == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) *static_cast<CUdeviceptr*>(out) = it->first;
    else *static_cast<std::size_t*>(out) = it->second;
    return CUDA_SUCCESS;
  }
  *static_cast<unsigned*>(out) = p >= 0x7f0000000000ULL && p < 0x7f8000000000ULL
                                     ? CU_MEMORYTYPE_DEVICE
                                     : CU_MEMORYTYPE_HOST;
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream* s, unsigned) {
  called("cuStreamCreate");
  std::lock_guard<std::mutex> lock(g_mu);
  *s = reinterpret_cast<CUstream>(g_next_handle += 0x10);
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(CUevent* e, unsigned) {
  std::lock_guard<std::mutex> lock(g_mu);
  *e = reinterpret_cast<CUevent>(g_next_handle += 0x10);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent, CUstream) { called("cuEventRecord"); return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned) { called("cuStreamWaitEvent"); return CUDA_SUCCESS; }
CUresult cuEventQuery(CUevent) { called("cuEventQuery"); return CUDA_SUCCESS; }  // always complete
// Work runs at once here, so a host function runs when it is enqueued.
CUresult cuLaunchHostFunc(CUstream, CUhostFn fn, void* data) {
  called("cuLaunchHostFunc");
  fn(data);
  return CUDA_SUCCESS;
}
// Stream memory operations run at once too, and count in the work digest in the order they ran.
void ran_stream_op(const char* what, cuuint32_t value) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto step = [](std::uint64_t h, std::uint8_t byte) { return (h ^ byte) * 0x100000001b3ULL; };
  for (const char* c = what; *c; ++c) g_work_digest = step(g_work_digest, static_cast<std::uint8_t>(*c));
  for (int b = 0; b < 4; ++b) g_work_digest = step(g_work_digest, static_cast<std::uint8_t>(value >> (8 * b)));
}
CUresult cuStreamWriteValue32_v2(CUstream, CUdeviceptr, cuuint32_t value, unsigned) {
  called("cuStreamWriteValue32_v2");
  ran_stream_op("write", value);
  return CUDA_SUCCESS;
}
CUresult cuStreamWaitValue32_v2(CUstream, CUdeviceptr, cuuint32_t value, unsigned) {
  called("cuStreamWaitValue32_v2");
  ran_stream_op("wait", value);
  return CUDA_SUCCESS;
}
CUresult cuMemPrefetchAsync_v2(CUdeviceptr, size_t bytes, CUmemLocation, unsigned, CUstream) {
  called("cuMemPrefetchAsync_v2");
  ran_stream_op("prefetch", static_cast<cuuint32_t>(bytes));
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoA_v2(CUarray, size_t offset, const void*, size_t) {
  called("cuMemcpyHtoA_v2");
  ran_stream_op("htoa", static_cast<cuuint32_t>(offset));
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) { called("cuStreamSynchronize"); return CUDA_SUCCESS; }
CUresult cuStreamQuery(CUstream) { called("cuStreamQuery"); return CUDA_SUCCESS; }  // always complete
CUresult cuCtxSynchronize() {
  called("cuCtxSynchronize");
  if (fake::any_capturing()) {
    called("cuCtxSynchronize failed");
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  }
  return CUDA_SUCCESS;
}
CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* s) {
  *s = fake::capturing(stream) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
CUresult cuProfilerStart() { called("cuProfilerStart"); return CUDA_SUCCESS; }
CUresult cuProfilerStop() { called("cuProfilerStop"); return CUDA_SUCCESS; }

// cuGetProcAddress with the driver's selection rule: the newest entry whose version is <= the
// requested one, preferring per-thread entries under CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status);
CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return cuGetProcAddress_v2(symbol, pfn, version, flags, nullptr);
}

#define E(name, version, pt, fn) {name, version, pt, reinterpret_cast<void*>(&fn)}
const Entry kEntries[] = {
    E("cuGetProcAddress", 11030, false, cuGetProcAddress),
    E("cuGetProcAddress", 12000, false, cuGetProcAddress_v2),
    E("cuInit", 2000, false, cuInit),
    E("cuDriverGetVersion", 2020, false, cuDriverGetVersion),
    E("cuCtxGetDevice", 2000, false, cuCtxGetDevice),
    E("cuDeviceGetName", 2000, false, cuDeviceGetName),
    E("cuDeviceGetAttribute", 2000, false, cuDeviceGetAttribute),
    E("cuFuncGetName", 12030, false, cuFuncGetName),
    E("cuFuncGetParamInfo", 12040, false, cuFuncGetParamInfo),
    E("cuLaunchKernel", 4000, false, cuLaunchKernel),
    E("cuLaunchKernel", 7000, true, cuLaunchKernel_ptsz),
    E("cuLaunchKernel", 90000, false, fake_cuLaunchKernel_future),
    E("cuMemAlloc", 3020, false, cuMemAlloc_v2),
    E("cuMemFree", 3020, false, cuMemFree_v2),
    E("cuMemAllocAsync", 11020, false, cuMemAllocAsync),
    E("cuMemFreeAsync", 11020, false, cuMemFreeAsync),
    E("cuMemcpyHtoDAsync", 3020, false, cuMemcpyHtoDAsync_v2),
    E("cuMemcpyDtoHAsync", 3020, false, cuMemcpyDtoHAsync_v2),
    E("cuMemcpyDtoH", 3020, false, cuMemcpyDtoH_v2),
    E("cuMemsetD32Async", 3020, false, cuMemsetD32Async),
    E("cuPointerGetAttribute", 4000, false, cuPointerGetAttribute),
    E("cuStreamCreate", 2000, false, cuStreamCreate),
    E("cuEventCreate", 2000, false, cuEventCreate),
    E("cuEventRecord", 2000, false, cuEventRecord),
    E("cuStreamWaitEvent", 3020, false, cuStreamWaitEvent),
    E("cuEventQuery", 2000, false, cuEventQuery),
    E("cuLaunchHostFunc", 10000, false, cuLaunchHostFunc),
    E("cuStreamWriteValue32", 11070, false, cuStreamWriteValue32_v2),
    E("cuStreamWaitValue32", 11070, false, cuStreamWaitValue32_v2),
    E("cuMemPrefetchAsync", 12020, false, cuMemPrefetchAsync_v2),
    E("cuMemcpyHtoA", 3020, false, cuMemcpyHtoA_v2),
    E("cuStreamSynchronize", 2000, false, cuStreamSynchronize),
    E("cuStreamQuery", 2000, false, cuStreamQuery),
    E("cuCtxSynchronize", 2000, false, cuCtxSynchronize),
    E("cuStreamIsCapturing", 10000, false, cuStreamIsCapturing),
    E("cuProfilerStart", 4000, false, cuProfilerStart),
    E("cuProfilerStop", 4000, false, cuProfilerStop),
};
#undef E

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* status) {
  const bool per_thread = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  const Entry* best = nullptr;
  const Entry* best_pt = nullptr;
  bool found_name = false;
  std::size_t graph_count = 0;
  const Entry* graphs = fake::graph_entries(&graph_count);
  std::vector<Entry> all(std::begin(kEntries), std::end(kEntries));
  all.insert(all.end(), graphs, graphs + graph_count);
  for (const Entry& e : all) {
    if (std::strcmp(e.name, symbol) != 0) continue;
    found_name = true;
    if (e.version > version) continue;
    const Entry*& slot = e.per_thread ? best_pt : best;
    if (!slot || e.version > slot->version) slot = &e;
  }
  const Entry* chosen = per_thread && best_pt ? best_pt : best;
  if (status) {
    *status = chosen ? CU_GET_PROC_ADDRESS_SUCCESS
                     : found_name ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                  : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  }
  *pfn = chosen ? chosen->fn : nullptr;
  return chosen ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // extern "C"
