// A map from pointers to small values, flat (open addressing, linear probing, power-of-two
// capacity, deletion by backward shift): no allocation per entry. nimble follows every cuBLASLt
// and cuDNN descriptor a program creates and destroys (PyTorch: around every matmul), and
// std::unordered_map's node per entry cost about 100 instructions a call in malloc and free.
// Not thread-safe; the null pointer is not a key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nimble::hooks {

template <class V>
class PointerMap {
 public:
  V* find(const void* key) {
    if (slots_.empty() || !key) return nullptr;
    for (std::size_t i = home(key);; i = next(i)) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (!slots_[i].key) return nullptr;
    }
  }

  // Inserts or replaces key's value.
  void assign(const void* key, V value) {
    if (!key) return;
    if (V* v = find(key)) {
      *v = std::move(value);
      return;
    }
    if ((size_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(key);
    while (slots_[i].key) i = next(i);
    slots_[i] = {key, std::move(value)};
    ++size_;
  }

  void erase(const void* key) {
    if (slots_.empty() || !key) return;
    std::size_t hole = home(key);
    while (slots_[hole].key != key) {
      if (!slots_[hole].key) return;
      hole = next(hole);
    }
    // Shift later entries of the run back into the hole when their home allows it.
    for (std::size_t i = next(hole); slots_[i].key; i = next(i)) {
      const std::size_t h = home(slots_[i].key);
      const bool movable = hole <= i ? (h <= hole || h > i) : (h <= hole && h > i);
      if (movable) {
        slots_[hole] = std::move(slots_[i]);
        hole = i;
      }
    }
    slots_[hole] = Slot{};
    --size_;
  }

  std::size_t size() const { return size_; }

 private:
  struct Slot {
    const void* key = nullptr;
    V value{};
  };

  std::size_t home(const void* key) const {
    auto x = reinterpret_cast<std::uintptr_t>(key);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;  // murmur3's finaliser: heap addresses differ in their middle bits
    x ^= x >> 33;
    return static_cast<std::size_t>(x) & (slots_.size() - 1);
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (slots_.size() - 1); }

  void grow() {
    std::vector<Slot> old(slots_.empty() ? 64 : slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (Slot& s : old) {
      if (s.key) assign(s.key, std::move(s.value));
    }
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace nimble::hooks
