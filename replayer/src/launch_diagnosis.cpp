#include "nimble/replayer/launch_diagnosis.hpp"

#include <iterator>
#include <utility>

namespace nimble::replayer {

CUresult get_kernel_attribute(const DriverApi& api, CUfunction f, bool is_cukernel, CUdevice device,
                              CUfunction_attribute attribute, int* value) {
  if (is_cukernel) {
    return api.kernel_get_attribute ? api.kernel_get_attribute(value, attribute, reinterpret_cast<CUkernel>(f), device)
                                    : CUDA_ERROR_NOT_SUPPORTED;
  }
  return api.func_get_attribute ? api.func_get_attribute(value, attribute, f) : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult set_kernel_attribute(const DriverApi& api, CUfunction f, bool is_cukernel, CUdevice device,
                              CUfunction_attribute attribute, int value) {
  if (is_cukernel) {
    return api.kernel_set_attribute ? api.kernel_set_attribute(attribute, value, reinterpret_cast<CUkernel>(f), device)
                                    : CUDA_ERROR_NOT_SUPPORTED;
  }
  return api.func_set_attribute ? api.func_set_attribute(f, attribute, value) : CUDA_ERROR_NOT_SUPPORTED;
}

std::string describe_kernel_limits(const DriverApi& api, CUfunction f, bool is_cukernel) {
  CUdevice device = 0;
  if (is_cukernel && (!api.ctx_get_device || api.ctx_get_device(&device) != CUDA_SUCCESS)) {
    return "kernel limits unknown (no current device)";
  }
  const std::pair<CUfunction_attribute, const char*> asked[] = {
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads/block"},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "static shared bytes"},
      {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "max dynamic shared bytes"},
      {CU_FUNC_ATTRIBUTE_NUM_REGS, "registers"},
      {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, "required cluster width"},
      {CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, "cluster size must be set"},
      {CU_FUNC_ATTRIBUTE_BINARY_VERSION, "binary version"},
  };
  std::string out;
  std::size_t dead_handle = 0;
  for (const auto& [attribute, label] : asked) {
    int value = 0;
    const CUresult r = get_kernel_attribute(api, f, is_cukernel, device, attribute, &value);
    dead_handle += r == CUDA_ERROR_INVALID_HANDLE;
    out += (out.empty() ? "" : ", ") + std::string(label) + " " +
           (r == CUDA_SUCCESS ? std::to_string(value) : std::string("?"));
  }
  if (dead_handle == std::size(asked)) {
    // XLA unloads the modules of the candidate kernels its autotuner timed (H200, 2026-11-28): a
    // recording of that timing names kernels that are gone by the time its graphs are built.
    return "the kernel is no longer loaded (every attribute query: CUDA_ERROR_INVALID_HANDLE): the program "
           "unloaded its module after the recording, as XLA does with the candidate kernels its autotuner timed";
  }
  return "kernel limits: " + out;
}

std::string describe_launch(const KernelOp& k) {
  return "recorded launch: grid " + dims_text(k.grid) + ", block " + dims_text(k.block) + ", dynamic shared " +
         std::to_string(k.shared_mem) + " bytes, " + std::to_string(k.param_offsets.size()) +
         " parameters in " + std::to_string(k.args.size()) + " argument bytes" +
         (k.cooperative ? ", cooperative" : "");
}

}  // namespace nimble::replayer
