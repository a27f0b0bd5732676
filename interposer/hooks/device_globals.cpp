#include "device_globals.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace nimble::hooks {
namespace {

struct Registry {
  std::mutex mu;
  std::map<const void*, std::vector<std::pair<std::uint64_t, std::uint64_t>>> by_owner;
  std::set<std::uint64_t> seen;
  std::unordered_map<std::string, std::pair<std::uint64_t, std::uint64_t>> tensor_maps;
};

Registry& registry() {
  static Registry* r = new Registry();  // leaked on purpose: used at exit
  return *r;
}

bool note_global(const void* owner, std::uint64_t addr, std::uint64_t size) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.seen.insert(addr).second) return false;
  r.by_owner[owner].emplace_back(addr, size);
  return true;
}

}  // namespace

bool note_module_global(CUmodule module, std::uint64_t addr, std::uint64_t size) {
  return note_global(module, addr, size);
}

bool note_library_global(CUlibrary library, std::uint64_t addr, std::uint64_t size) {
  return note_global(library, addr, size);
}

std::vector<deps::MemAccess> global_accesses(const KernelInfo& kernel) {
  std::vector<deps::MemAccess> out;
  const void* owner = kernel.is_cukernel ? static_cast<const void*>(kernel.library)
                                         : static_cast<const void*>(kernel.module);
  if (!owner) return out;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_owner.find(owner);
  if (it == r.by_owner.end()) return out;
  for (const auto& [addr, size] : it->second) {
    out.push_back({addr, size, deps::Access::ReadWrite, false});
  }
  return out;
}

void note_tensor_map(const CUtensorMap* map, std::uint64_t addr, std::uint64_t size) {
  if (!map) return;
  Registry& r = registry();
  std::string key(reinterpret_cast<const char*>(map), sizeof(CUtensorMap));
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.tensor_maps.size() > 100000) r.tensor_maps.clear();  // bound memory for churny programs
  r.tensor_maps[key] = {addr, size};
}

std::vector<deps::MemAccess> tensor_map_accesses(const std::vector<std::uint8_t>& args,
                                                 const std::vector<deps::ParamLayout>& params) {
  std::vector<deps::MemAccess> out;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.tensor_maps.empty()) return out;
  for (const auto& p : params) {
    if (p.size != sizeof(CUtensorMap) || p.offset + p.size > args.size()) continue;
    std::string key(reinterpret_cast<const char*>(args.data() + p.offset), p.size);
    auto it = r.tensor_maps.find(key);
    if (it != r.tensor_maps.end()) {
      out.push_back({it->second.first, it->second.second, deps::Access::ReadWrite, false});
    }
  }
  return out;
}

}  // namespace nimble::hooks
