// What nimble learns about a kernel handle once and caches: its mangled and demangled name and
// its parameter layout (cuFuncGetName / cuFuncGetParamInfo, or the cuKernel* forms when the
// handle is a CUkernel passed where a CUfunction is expected), and its module or library.
#pragma once

#include "nimble/trace/trace.hpp"

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deps/engine.hpp"

namespace nimble::hooks {

struct KernelInfo {
  bool is_cukernel = false;     // the handle was a CUkernel (cudart launches, CUDA >= 12)
  std::string mangled;
  std::string name;             // demangled; the mangled name if it does not demangle
  bool params_known = false;    // the driver reported the parameter layout
  std::vector<deps::ParamLayout> params;
  std::size_t arg_bytes = 0;    // end of the last parameter
  CUmodule module = nullptr;    // for module globals (CUfunction handles)
  CUlibrary library = nullptr;  // for library globals (CUkernel handles)
};

// Cached per handle; thread-safe. Never fails: unknown parts stay empty.
const KernelInfo& kernel_info(CUfunction f);

// abi::__cxa_demangle, or the input unchanged when it is not a mangled C++ name.
std::string demangle(const char* mangled);

// The argument bytes as the kernel receives them: from the `extra` buffer
// (CU_LAUNCH_PARAM_BUFFER_POINTER) or by copying each kernelParams[i] to its offset.
// nullopt when neither is possible (layout unknown and no `extra` buffer).
// `passed`: as replayer::kernel_argument_bytes.
std::optional<std::vector<std::uint8_t>> gather_arguments(const KernelInfo& info, void** params,
                                                          void** extra, std::size_t* passed = nullptr);

using trace::to_hex;  // bytes as "args.bytes" spells them
using trace::hex_address;  // "0x7f12...", as trace files spell addresses

}  // namespace nimble::hooks
