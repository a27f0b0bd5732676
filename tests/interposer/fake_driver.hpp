// What the fake driver's files share (fake_driver.cpp, fake_driver_graphs.cpp).
#pragma once

#include <cuda.h>

#include <cstddef>

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

}  // namespace fake
