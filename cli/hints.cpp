#include "hints.hpp"

#include "nimble/trace/recorded.hpp"

#include <cstdio>
#include <map>
#include <set>

namespace nimble::cli {

std::optional<std::string> shared_allocation_hint(const trace::Trace& trace) {
  constexpr std::size_t kMinKernels = 20;
  std::size_t kernels = 0;
  std::map<std::int64_t, std::size_t> users;  // allocation id -> kernels touching it
  for (const auto& task : trace.tasks) {
    if (trace::kind_of(task) != trace::TaskKind::Kernel) continue;
    ++kernels;
    auto mem = task.extra.find("mem");
    if (mem == task.extra.end() || !mem->is_array()) continue;
    std::set<std::int64_t> touched;
    for (const auto& access : *mem) {
      if (access.is_object() && access.contains("alloc") && access["alloc"].is_number_integer()) {
        touched.insert(access["alloc"].get<std::int64_t>());
      }
    }
    for (std::int64_t id : touched) ++users[id];
  }
  if (kernels < kMinKernels) return std::nullopt;
  std::int64_t busiest = -1;
  std::size_t most = 0;
  for (const auto& [id, n] : users) {
    if (n > most) busiest = id, most = n;
  }
  if (2 * most < kernels) return std::nullopt;
  std::string where = "allocation " + std::to_string(busiest);
  auto allocations = trace.extra.find("allocations");
  if (allocations != trace.extra.end() && allocations->is_array()) {
    for (const auto& a : *allocations) {
      if (!a.is_object() || a.value("id", std::int64_t{-1}) != busiest) continue;
      char size[64];
      std::snprintf(size, sizeof size, "%.1f MiB", static_cast<double>(a.value("size", std::uint64_t{0})) / (1 << 20));
      where += " (" + std::string(size) + (a.contains("addr") && a["addr"].is_string() ? " at " + a["addr"].get<std::string>() : "") + ")";
    }
  }
  return std::to_string(most) + " of " + std::to_string(kernels) + " kernels touch " + where +
         ": nimble counts a kernel's pointer argument as touching its whole allocation (the "
         "kernel's extent is unknown), so kernels sharing one large allocation (a caching "
         "allocator's segment) are ordered one after another. With PyTorch, PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync gives every "
         "tensor an allocation of its own (docs/replay.md).";
}

std::optional<std::string> capture_text(const trace::Trace& trace) {
  const auto it = trace.extra.find("capture");
  if (it == trace.extra.end() || !it->is_object()) return std::nullopt;
  const trace::json& c = *it;
  std::string text = c.value("range", std::string("?")) + ", iteration " + std::to_string(c.value("iteration", 0)) +
                     ", ended by " + c.value("ended_by", std::string("?"));
  if (c.value("truncated", false)) text += " (TRUNCATED: the window was open at exit)";
  const trace::json automatic = c.value("auto", trace::json::object());
  if (!automatic.is_object() || automatic.empty()) return text;
  if (automatic.contains("period")) text += "; period " + std::to_string(automatic.value("period", 0)) + " tasks";
  if (automatic.contains("one_block_of_sync_period")) {
    text += ", one block of the " + std::to_string(automatic.value("one_block_of_sync_period", 0)) +
            " tasks between two host syncs (the program reads results every few steps)";
  }
  if (automatic.value("followed_one_thread", false)) text += ", found on the thread that launched the most kernels";
  if (const int dropped = automatic.value("windows_dropped_for_not_repeating", 0); dropped > 0) {
    text += ", after " + std::to_string(dropped) + " window(s) dropped for not repeating their period";
  }
  if (!automatic.value("matched_expected_period", true)) {
    text += ". The recorded tasks did NOT repeat the period found: this is likely set-up or warm-up work "
            "(autotuning, a first epoch), not the main loop; record a later one with --iteration N";
  }
  return text;
}

}  // namespace nimble::cli
