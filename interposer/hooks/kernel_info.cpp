#include "kernel_info.hpp"

#include "nimble/replayer/kernel_arguments.hpp"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "real_driver.hpp"

namespace nimble::hooks {
namespace {

using FuncGetName = CUresult(CUDAAPI*)(const char**, CUfunction);
using KernelGetName = CUresult(CUDAAPI*)(const char**, CUkernel);
using FuncGetParamInfo = CUresult(CUDAAPI*)(CUfunction, size_t, size_t*, size_t*);
using KernelGetParamInfo = CUresult(CUDAAPI*)(CUkernel, size_t, size_t*, size_t*);
using FuncGetModule = CUresult(CUDAAPI*)(CUmodule*, CUfunction);
using KernelGetLibrary = CUresult(CUDAAPI*)(CUlibrary*, CUkernel);

// Reads parameter i's (offset, size) until the driver says there is no parameter i.
template <class Handle>
bool read_layout(CUresult(CUDAAPI* get)(Handle, size_t, size_t*, size_t*), Handle h,
                 KernelInfo& info) {
  if (!get) return false;
  std::vector<deps::ParamLayout> params;
  for (size_t i = 0; i < 4096; ++i) {
    size_t offset = 0, size = 0;
    const CUresult r = get(h, i, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE && i > 0) break;  // past the last parameter
    if (r != CUDA_SUCCESS) {
      // At index 0, INVALID_VALUE means "no parameters"; anything else means "not this kind".
      if (i == 0 && r == CUDA_ERROR_INVALID_VALUE) break;
      return false;
    }
    params.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
  }
  info.params = std::move(params);
  info.params_known = true;
  info.arg_bytes = 0;
  for (const auto& p : info.params) info.arg_bytes = std::max<std::size_t>(info.arg_bytes, p.offset + p.size);
  return true;
}

std::unique_ptr<KernelInfo> inspect(CUfunction f) {
  auto info = std::make_unique<KernelInfo>();
  const char* mangled = nullptr;
  auto func_name = driver_fn<FuncGetName>("cuFuncGetName", 12030);
  auto kernel_name = driver_fn<KernelGetName>("cuKernelGetName", 12030);
  if (func_name && func_name(&mangled, f) == CUDA_SUCCESS && mangled) {
    info->is_cukernel = false;
  } else if (kernel_name && kernel_name(&mangled, reinterpret_cast<CUkernel>(f)) == CUDA_SUCCESS &&
             mangled) {
    info->is_cukernel = true;
  }
  if (mangled) {
    info->mangled = mangled;
    info->name = demangle(mangled);
  }

  auto func_params = driver_fn<FuncGetParamInfo>("cuFuncGetParamInfo", 12040);
  auto kernel_params = driver_fn<KernelGetParamInfo>("cuKernelGetParamInfo", 12040);
  const auto k = reinterpret_cast<CUkernel>(f);
  // Ask the API matching the handle first; if it reports no parameters, ask the other one too,
  // so a handle of the other kind can never pass as a kernel without arguments.
  KernelInfo as_function, as_kernel;
  bool function_ok = false, kernel_ok = false;
  if (!info->is_cukernel) function_ok = read_layout(func_params, f, as_function);
  if (!function_ok || as_function.params.empty()) kernel_ok = read_layout(kernel_params, k, as_kernel);
  if (info->is_cukernel && (!kernel_ok || as_kernel.params.empty())) {
    function_ok = read_layout(func_params, f, as_function);
  }
  const KernelInfo* chosen = nullptr;
  if (kernel_ok && !as_kernel.params.empty()) {
    chosen = &as_kernel;
    info->is_cukernel = true;
  } else if (function_ok) {
    chosen = &as_function;
  } else if (kernel_ok) {
    chosen = &as_kernel;
  }
  if (chosen) {
    info->params = chosen->params;
    info->params_known = true;
    info->arg_bytes = chosen->arg_bytes;
  }

  if (info->is_cukernel) {
    if (auto get_library = driver_fn<KernelGetLibrary>("cuKernelGetLibrary", 12050)) {
      CUlibrary lib = nullptr;
      if (get_library(&lib, k) == CUDA_SUCCESS) info->library = lib;
    }
  } else if (auto get_module = driver_fn<FuncGetModule>("cuFuncGetModule", 11000)) {
    CUmodule mod = nullptr;
    if (get_module(&mod, f) == CUDA_SUCCESS) info->module = mod;
  }
  return info;
}

}  // namespace

const KernelInfo& kernel_info(CUfunction f) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<CUfunction, std::unique_ptr<KernelInfo>>();
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache->find(f);
    if (it != cache->end()) return *it->second;
  }
  auto info = inspect(f);  // driver calls outside the lock
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = cache->emplace(f, std::move(info));
  return *it->second;
}

std::string demangle(const char* mangled) {
  if (!mangled) return {};
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || !out) return mangled;
  std::string result(out);
  std::free(out);
  return result;
}

std::optional<std::vector<std::uint8_t>> gather_arguments(const KernelInfo& info, void** params,
                                                          void** extra, std::size_t* passed) {
  return replayer::kernel_argument_bytes(info.params, info.params_known, params, extra, passed);
}

}  // namespace nimble::hooks
