// Kernel attributes for replay: reading and setting them for either kind of handle, and what the
// driver says about a kernel whose replay launch failed, so the error names the limit the
// recorded launch broke instead of a bare CUDA_ERROR_INVALID_VALUE.
#pragma once

#include <string>

#include "nimble/replayer/driver_api.hpp"
#include "nimble/replayer/plan.hpp"

namespace nimble::replayer {

// A CUkernel's attributes are per device (`device`); a CUfunction's its own. A missing driver
// entry point answers CUDA_ERROR_NOT_SUPPORTED.
CUresult get_kernel_attribute(const DriverApi& api, CUfunction f, bool is_cukernel, CUdevice device,
                              CUfunction_attribute attribute, int* value);
CUresult set_kernel_attribute(const DriverApi& api, CUfunction f, bool is_cukernel, CUdevice device,
                              CUfunction_attribute attribute, int value);

// "threads/block ≤ 512, static shared 16384 B, dynamic shared ≤ 32768 B, 64 registers, ..." for
// the handle (asked per device for a CUkernel), or why the driver could not say.
std::string describe_kernel_limits(const DriverApi& api, CUfunction f, bool is_cukernel);

// The recorded launch next to those limits: grid, block, shared memory, argument bytes.
std::string describe_launch(const KernelOp& k);

}  // namespace nimble::replayer
