// Task signatures: a cheap hash of what identifies a task across iterations (kind, function,
// launch shape, copy size), used by the automatic capture range to find the repeating period.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace nimble::hooks {

constexpr std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64 finaliser over the running hash and the new value.
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t hash_string(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// A signature's kind, named by a string literal and hashed when compiling: signatures are computed
// for every call nimble run sees, and hashing the name each time cost about 80 instructions.
struct SignatureKind {
  template <std::size_t N>
  consteval SignatureKind(const char (&name)[N]) : hash(hash_string(std::string_view(name, N - 1))) {}
  std::uint64_t hash;
};

// Computed for every call nimble run sees: each value is folded in with a multiply and a shift
// (each step a bijection of the running hash), and one finaliser mixes the whole.
template <class... V>
constexpr std::uint64_t signature_of(SignatureKind kind, V... values) {
  std::uint64_t h = kind.hash;
  ((h = (h ^ static_cast<std::uint64_t>(values)) * 0x9e3779b97f4a7c15ULL, h ^= h >> 31), ...);
  return mix(h, sizeof...(values));
}

// A kernel launch's: the function handle and the launch shape.
constexpr std::uint64_t kernel_signature(std::uint64_t function, const unsigned grid[3], const unsigned block[3]) {
  return signature_of("kernel", function, grid[0], grid[1], grid[2], block[0], block[1], block[2]);
}

}  // namespace nimble::hooks
