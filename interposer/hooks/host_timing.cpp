#include "host_timing.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "hook_table.hpp"

namespace nimble::hooks {
namespace {

// Durations are also counted in buckets of 1/8 octave (about 9% wide), so the table can show the
// median call: means are dominated by one-off calls (cuDNN's autotuning runs inside its first calls).
constexpr std::size_t kBuckets = 8 * 40;

std::size_t bucket_of(std::uint64_t ns) {
  if (ns < 8) return static_cast<std::size_t>(ns);
  const int octave = 63 - __builtin_clzll(ns);  // >= 3
  const std::size_t sub = (ns >> (octave - 3)) & 7;
  return std::min(kBuckets - 1, static_cast<std::size_t>(octave - 2) * 8 + sub);
}

// The middle of a bucket, in ns.
double bucket_middle(std::size_t bucket) {
  if (bucket < 8) return static_cast<double>(bucket);
  const int octave = static_cast<int>(bucket / 8) + 2;
  const double low = static_cast<double>(8 + bucket % 8) * static_cast<double>(1ull << (octave - 3));
  return low + static_cast<double>(1ull << (octave - 3)) / 2;
}

struct Slot {
  std::atomic<std::uint64_t> calls{0};
  std::atomic<std::uint64_t> ns{0};
  std::atomic<std::uint32_t> buckets[kBuckets] = {};

  double median_ns() const {
    const std::uint64_t half = (calls.load(std::memory_order_relaxed) + 1) / 2;
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      seen += buckets[b].load(std::memory_order_relaxed);
      if (seen >= half) return bucket_middle(b);
    }
    return 0;
  }
};

// Allocated once and never freed: calls may still arrive during exit.
Slot* g_slots = nullptr;
std::atomic<std::uint64_t> g_outermost_ns{0};

const char* slot_name(std::size_t slot) {
  return slot < kHookCount ? kHooks[slot].symbol : library_hook_name(slot - kHookCount);
}

void print_host_times() {
  struct Row {
    const char* name;
    std::uint64_t calls, ns;
    double median_ns;
  };
  std::vector<Row> rows;
  for (std::size_t i = 0; i < host_timing_slots(); ++i) {
    const std::uint64_t calls = g_slots[i].calls.load(std::memory_order_relaxed);
    if (calls) rows.push_back({slot_name(i), calls, g_slots[i].ns.load(std::memory_order_relaxed), g_slots[i].median_ns()});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
  std::string text =
      "nimble: host time inside intercepted calls (NIMBLE_HOST_TIMES; a driver call made inside a library call "
      "counts in both; medians within 9%)\n"
      "  function                                      calls     total ms   mean us median us\n";
  char line[160];
  for (const Row& r : rows) {
    std::snprintf(line, sizeof line, "  %-42s %9llu %12.3f %9.3f %9.3f\n", r.name,
                  static_cast<unsigned long long>(r.calls), static_cast<double>(r.ns) / 1e6,
                  static_cast<double>(r.ns) / 1e3 / static_cast<double>(r.calls), r.median_ns / 1e3);
    text += line;
  }
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace

std::size_t host_timing_slots() { return kHookCount + library_hook_count(); }

void add_host_time(std::size_t slot, std::uint64_t ns) {
  if (!g_slots || slot >= host_timing_slots()) return;
  g_slots[slot].calls.fetch_add(1, std::memory_order_relaxed);
  g_slots[slot].ns.fetch_add(ns, std::memory_order_relaxed);
  g_slots[slot].buckets[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
}

void add_outermost_host_time(std::uint64_t ns) { g_outermost_ns.fetch_add(ns, std::memory_order_relaxed); }

void start_host_timing() {
  if (g_slots) return;
  g_slots = new Slot[host_timing_slots()];
  std::atexit(print_host_times);
  g_host_timing.store(true, std::memory_order_relaxed);
}

}  // namespace nimble::hooks

// For programs that time their own steps (tests/programs/corpus_common.py): host ns spent inside
// nimble's wrappers so far, nested calls counted once; 0 unless NIMBLE_HOST_TIMES=1.
extern "C" __attribute__((visibility("default"))) unsigned long long nimble_host_ns_inside() {
  return nimble::hooks::g_outermost_ns.load(std::memory_order_relaxed);
}
