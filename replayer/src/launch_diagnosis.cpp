#include "nimble/replayer/launch_diagnosis.hpp"

#include <utility>

namespace nimble::replayer {

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
  for (const auto& [attribute, label] : asked) {
    int value = 0;
    CUresult r = CUDA_ERROR_NOT_SUPPORTED;
    if (is_cukernel && api.kernel_get_attribute) {
      r = api.kernel_get_attribute(&value, attribute, reinterpret_cast<CUkernel>(f), device);
    } else if (!is_cukernel && api.func_get_attribute) {
      r = api.func_get_attribute(&value, attribute, f);
    }
    out += (out.empty() ? "" : ", ") + std::string(label) + " " +
           (r == CUDA_SUCCESS ? std::to_string(value) : std::string("?"));
  }
  return "kernel limits: " + out;
}

std::string describe_launch(const KernelOp& k) {
  auto dims = [](const unsigned* d) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
  };
  return "recorded launch: grid " + dims(k.grid) + ", block " + dims(k.block) + ", dynamic shared " +
         std::to_string(k.shared_mem) + " bytes, " + std::to_string(k.param_offsets.size()) +
         " parameters in " + std::to_string(k.args.size()) + " argument bytes" +
         (k.cooperative ? ", cooperative" : "");
}

}  // namespace nimble::replayer
