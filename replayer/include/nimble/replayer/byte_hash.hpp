// 64-bit FNV-1a over bytes, for telling sets of bytes apart in this process (equal hashes are
// taken for equal bytes): device memory checksums (bench) and graph parameter sets (run_executor).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nimble::replayer {

inline constexpr std::uint64_t kByteHashStart = 1469598103934665603ull;

// `hash` continued over `n` bytes at `bytes` (start from kByteHashStart).
inline std::uint64_t byte_hash(std::uint64_t hash, const void* bytes, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(bytes);
  for (std::size_t i = 0; i < n; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

}  // namespace nimble::replayer
