// The argument bytes a kernel receives, from a launch's (or a graph kernel node's) kernelParams
// or `extra` buffer and the parameter layout the driver reported. One reader for the recorder's
// hooks and for libnimble_graph.so's captured nodes. Needs the CUDA headers; header-only, so the
// Python library does not link the replayer.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "deps/engine.hpp"

namespace nimble::replayer {

// From the `extra` buffer (CU_LAUNCH_PARAM_BUFFER_POINTER, its size from
// CU_LAUNCH_PARAM_BUFFER_SIZE or else the layout's end; a shorter buffer than the layout is
// padded with zeros to its end), or by copying each kernelParams[i] to
// its offset in the layout. nullopt when neither is possible: no `extra` buffer and the layout
// unknown (`layout_known` false), an `extra` buffer whose size neither it nor the layout gives,
// or a parameter pointer missing. `passed`, when given, receives the bytes the program passed (fewer
// than the result's only when it was padded).
inline std::optional<std::vector<std::uint8_t>> kernel_argument_bytes(const std::vector<deps::ParamLayout>& layout,
                                                                      bool layout_known, void** params,
                                                                      void** extra, std::size_t* passed = nullptr) {
  std::size_t end = 0;
  for (const deps::ParamLayout& p : layout) end = std::max<std::size_t>(end, std::size_t{p.offset} + p.size);
  if (extra) {
    const void* buffer = nullptr;
    std::optional<std::size_t> size;
    if (layout_known) size = end;
    // A malformed list without CU_LAUNCH_PARAM_END stops after 32 pairs.
    for (std::size_t i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
        buffer = extra[i + 1];
      } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1]) {
        size = *static_cast<const std::size_t*>(extra[i + 1]);
      }
    }
    if (buffer) {
      if (!size) return std::nullopt;
      const auto* bytes = static_cast<const std::uint8_t*>(buffer);
      std::vector<std::uint8_t> out(bytes, bytes + *size);
      if (passed) *passed = out.size();
      // NCCL declares a 4 KB argument and passes only the bytes it uses; the driver leaves the
      // rest undefined. Zeros stand for it, so that every reader of the layout (pointer scans,
      // replay's kernelParams) stays inside the bytes.
      if (layout_known && out.size() < end) out.resize(end, 0);
      return out;
    }
  }
  if (!layout_known) return std::nullopt;
  if (!layout.empty() && !params) return std::nullopt;
  std::vector<std::uint8_t> bytes(end, 0);
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (!params[i]) return std::nullopt;
    std::memcpy(bytes.data() + layout[i].offset, params[i], layout[i].size);
  }
  if (passed) *passed = bytes.size();
  return bytes;
}

}  // namespace nimble::replayer
