// The hook table is consistent and the cuGetProcAddress selection picks the variant the driver
// would: by requested version and by the per-thread-default-stream flag.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <tuple>

#include "hook_table.hpp"
#include "real_driver.hpp"
#include "test_support.hpp"

namespace nimble::hooks {
namespace {

std::string selected(const char* base, int version, std::uint64_t flags) {
  const HookInfo* h = select_variant(base, version, flags);
  return h ? h->symbol : "(none)";
}

constexpr auto kPerThread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
constexpr auto kLegacy = CU_GET_PROC_ADDRESS_LEGACY_STREAM;

TEST(HookTable, EveryEntryHasItsOwnWrapperAndIndex) {
  std::set<void*> wrappers;
  for (std::size_t i = 0; i < kHookCount; ++i) {
    const HookInfo& h = kHooks[i];
    EXPECT_EQ(static_cast<std::size_t>(h.id), i) << h.symbol;
    void* w = wrapper_address(h.id);
    EXPECT_NE(w, nullptr) << h.symbol;
    EXPECT_TRUE(wrappers.insert(w).second) << h.symbol << " shares a wrapper";
    EXPECT_EQ(find_hook_by_symbol(h.symbol), &h) << h.symbol;
  }
}

TEST(HookTable, SymbolsAndVariantsAreUnique) {
  std::set<std::string> symbols;
  std::set<std::tuple<std::string, int, StreamVariant>> variants;
  for (const HookInfo& h : kHooks) {
    EXPECT_TRUE(symbols.insert(h.symbol).second) << h.symbol;
    EXPECT_TRUE(variants.insert({h.base, h.version, h.stream}).second)
        << h.symbol << ": two entries claim the same (name, version, stream)";
    const std::string symbol = h.symbol;
    const bool suffix = symbol.ends_with("_ptsz") || symbol.ends_with("_ptds");
    EXPECT_EQ(suffix, h.stream == StreamVariant::PerThread) << h.symbol;
    EXPECT_TRUE(symbol.rfind(h.base, 0) == 0) << h.symbol << " does not start with " << h.base;
  }
}

TEST(HookTable, EverySymbolIsOneLibcudaExports) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub libcuda.so";
  void* lib = dlopen(stub, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr);
  for (const HookInfo& h : kHooks) EXPECT_NE(real_dlsym()(lib, h.symbol), nullptr) << h.symbol;
}

TEST(HookTable, ExportedByTheBuiltLibrary) {
  void* lib = dlopen(test::preload_path().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  for (const HookInfo& h : kHooks) EXPECT_NE(real_dlsym()(lib, h.symbol), nullptr) << h.symbol;
  EXPECT_NE(real_dlsym()(lib, "dlsym"), nullptr);
  EXPECT_NE(real_dlsym()(lib, "InitializeInjectionNvtx2"), nullptr);
  EXPECT_NE(real_dlsym()(lib, "cublasLtMatmul"), nullptr);
  EXPECT_NE(real_dlsym()(lib, "cudnnBackendExecute"), nullptr);
  // nimble's own code and its static C++ runtime stay hidden.
  EXPECT_EQ(real_dlsym()(lib, "_ZN6nimble5hooks12resolve_realENS0_6HookIdE"), nullptr);
#ifndef NIMBLE_ASAN_RUNTIME
  EXPECT_EQ(real_dlsym()(lib, "_ZSt4cout"), nullptr);
#else
  // The sanitized build links libstdc++ dynamically (CMakeLists.txt): the look-up reaches it as a
  // dependency, but the definition must not be libnimble.so's own.
  Dl_info info{};
  void* cout = real_dlsym()(lib, "_ZSt4cout");
  ASSERT_NE(cout, nullptr);
  ASSERT_NE(dladdr(cout, &info), 0);
  EXPECT_NE(std::filesystem::path(info.dli_fname).filename(), std::filesystem::path(test::preload_path()).filename());
#endif
}

TEST(SelectVariant, PerThreadFlagPicksThePtszVariant) {
  EXPECT_EQ(selected("cuLaunchKernel", 12000, kPerThread), "cuLaunchKernel_ptsz");
  EXPECT_EQ(selected("cuLaunchKernel", 12000, kLegacy), "cuLaunchKernel");
  EXPECT_EQ(selected("cuLaunchKernel", 12000, 0), "cuLaunchKernel");
  EXPECT_EQ(selected("cuMemcpyHtoDAsync", 13000, kPerThread), "cuMemcpyHtoDAsync_v2_ptsz");
  EXPECT_EQ(selected("cuMemcpyDtoH", 13000, kPerThread), "cuMemcpyDtoH_v2_ptds");
  EXPECT_EQ(selected("cuStreamWaitEvent", 12000, kPerThread), "cuStreamWaitEvent_ptsz");
  EXPECT_EQ(selected("cuEventRecord", 12000, kPerThread), "cuEventRecord_ptsz");
}

TEST(SelectVariant, PerThreadFlagWithoutAPerThreadVariantFallsBack) {
  EXPECT_EQ(selected("cuMemAlloc", 12000, kPerThread), "cuMemAlloc_v2");
  EXPECT_EQ(selected("cuCtxSynchronize", 12000, kPerThread), "cuCtxSynchronize");
  // Per-thread variants of cuLaunchKernel appeared in CUDA 7.0.
  EXPECT_EQ(selected("cuLaunchKernel", 6050, kPerThread), "cuLaunchKernel");
}

TEST(SelectVariant, VersionPicksTheNewestNotNewerThanRequested) {
  EXPECT_EQ(selected("cuMemAlloc", 3020, 0), "cuMemAlloc_v2");
  EXPECT_EQ(selected("cuMemAlloc", 3010, 0), "(none)");  // the 32-bit v1 is not wrapped
  EXPECT_EQ(selected("cuGetProcAddress", 11030, 0), "cuGetProcAddress");
  EXPECT_EQ(selected("cuGetProcAddress", 12000, 0), "cuGetProcAddress_v2");
  EXPECT_EQ(selected("cuGetProcAddress", 13000, 0), "cuGetProcAddress_v2");
  EXPECT_EQ(selected("cuGetProcAddress", 11020, 0), "(none)");
  EXPECT_EQ(selected("cuStreamBeginCapture", 10000, 0), "cuStreamBeginCapture");
  EXPECT_EQ(selected("cuStreamBeginCapture", 12000, 0), "cuStreamBeginCapture_v2");
  EXPECT_EQ(selected("cuStreamBeginCapture", 12000, kPerThread), "cuStreamBeginCapture_v2_ptsz");
  EXPECT_EQ(selected("cuCtxSynchronize", 12090, 0), "cuCtxSynchronize");
  EXPECT_EQ(selected("cuCtxSynchronize", 13000, 0), "cuCtxSynchronize_v2");
  EXPECT_EQ(selected("cuMemcpyBatchAsync", 12080, 0), "cuMemcpyBatchAsync");
  EXPECT_EQ(selected("cuMemcpyBatchAsync", 13000, kPerThread), "cuMemcpyBatchAsync_v2_ptsz");
}

TEST(SelectVariant, UnknownNamesAreNotHooked) {
  EXPECT_EQ(select_variant("cuDeviceGetName", 13000, 0), nullptr);
  EXPECT_EQ(select_variant("cuLaunchKernelExtra", 13000, 0), nullptr);
  EXPECT_EQ(select_variant("", 13000, 0), nullptr);
  EXPECT_EQ(find_hook_by_symbol("cuMemAlloc"), nullptr);  // v1: not wrapped
  EXPECT_FALSE(is_hooked_base("cuInit"));
  EXPECT_TRUE(is_hooked_base("cuLaunchKernel"));
}

}  // namespace
}  // namespace nimble::hooks
