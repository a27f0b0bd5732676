// What a kernel, copy or memset task writes into the trace (fields and memory accesses), shared
// by the launch hooks and the nodes of the program's own graphs (program_graphs.cpp).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "deps/engine.hpp"

namespace nimble::hooks {

struct KernelShape {
  CUfunction f = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_mem = 0;
  const CUlaunchAttribute* attrs = nullptr;  // cuLaunchKernelEx, or a graph node's attributes
  unsigned num_attrs = 0;
  bool cooperative = false;
};

// `bytes`: the argument bytes as the kernel receives them; nullopt when they cannot be read
// (the task then touches all memory). `passed`: the bytes the program passed, when fewer (the rest
// padding, recorded as args.passed_bytes).
void describe_kernel(const KernelShape& k, const std::optional<std::vector<std::uint8_t>>& bytes,
                     deps::TaskEvent& event, std::size_t passed = SIZE_MAX);

void describe_copy_3d(const CUDA_MEMCPY3D& copy, deps::TaskEvent& event);

struct Fill {
  CUdeviceptr dst;
  std::uint64_t element_size;
  std::uint64_t value;
  std::uint64_t width;   // elements per row
  std::uint64_t height;  // rows (1 for the 1D forms)
  std::uint64_t pitch;   // bytes between rows (0 for the 1D forms)
};
void describe_fill(const Fill& f, deps::TaskEvent& event);

}  // namespace nimble::hooks
