#include "hook_table.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace nimble::hooks {
namespace {

struct Index {
  std::unordered_map<std::string_view, const HookInfo*> by_symbol;
  std::unordered_map<std::string_view, std::vector<const HookInfo*>> by_base;
};

// Built on first use (dlsym can be called before static constructors run).
const Index& index() {
  static const Index idx = [] {
    Index i;
    for (const HookInfo& h : kHooks) {
      i.by_symbol.emplace(h.symbol, &h);
      i.by_base[h.base].push_back(&h);
    }
    return i;
  }();
  return idx;
}

}  // namespace

const HookInfo* find_hook_by_symbol(std::string_view symbol) {
  const auto& m = index().by_symbol;
  auto it = m.find(symbol);
  return it == m.end() ? nullptr : it->second;
}

bool is_hooked_base(std::string_view base) { return index().by_base.count(base) != 0; }

const HookInfo* select_variant(std::string_view base, int cuda_version, std::uint64_t flags) {
  const auto& m = index().by_base;
  auto it = m.find(base);
  if (it == m.end()) return nullptr;
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const HookInfo* legacy = nullptr;
  const HookInfo* per_thread_variant = nullptr;
  for (const HookInfo* h : it->second) {
    if (h->version > cuda_version) continue;
    const HookInfo*& best = h->stream == StreamVariant::PerThread ? per_thread_variant : legacy;
    if (!best || h->version > best->version) best = h;
  }
  if (per_thread && per_thread_variant) return per_thread_variant;
  return legacy;
}

}  // namespace nimble::hooks
