// What the fake driver's files share (fake_driver.cpp, fake_driver_graphs.cpp).
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fake {

// Logs a call by its exported name (the last call, and a count per name).
void called(const char* name);

// A cuGetProcAddress table row.
struct Entry {
  const char* name;
  int version;
  bool per_thread;
  void* fn;
};

// Stream capture and graphs (fake_driver_graphs.cpp), handed out only with
// FAKE_DRIVER_GRAPHS=1 so the recording tests keep a driver without them.
const Entry* graph_entries(std::size_t* count);
// Whether `stream` is being captured: a launch there becomes a graph node, not work.
bool capturing(CUstream stream);
// Whether any stream is being captured: as the real driver does (scripts/gpu/capture_isolation.cu),
// cuCtxSynchronize then fails and the capture is invalidated.
bool any_capturing();

// A kernel's argument bytes, from kernelParams (by its parameter layout) or an `extra` buffer.
std::vector<std::uint8_t> kernel_args(CUfunction f, void** params, void** extra);
// Kernel work that ran (an eager launch, or a kernel node of a launched graph): its function and
// argument bytes go into a running digest, so tests can check that nimble run ran exactly the
// work a plain run does, in the same order, on the same streams (a created stream's handle goes
// into the digest; the default streams, null, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD, count as one).
void ran_kernel(CUfunction f, const std::vector<std::uint8_t>& args, CUstream stream);
// Host time a driver call takes on top of its work, in microseconds, from the environment variable
// `variable` (read once per call site; unset: none): FAKE_DRIVER_LAUNCH_US for each eager kernel
// launch, FAKE_DRIVER_GRAPH_LAUNCH_US for each graph launch, so that tests of nimble run's process
// guard, which times the program, can make replay pay or not. Spent busy, as a driver call is.
void spend_host_time(int microseconds);
int env_microseconds(const char* variable);
// An op issued on a capturing stream becomes the next node of its graph (`f` null: not a kernel).
void captured(CUstream stream, CUfunction f, std::vector<std::uint8_t> args);

}  // namespace fake
