#include "nimble/replayer/bench.hpp"
#include "nimble/replayer/byte_hash.hpp"

#include <algorithm>

#include "nimble/replayer/replay.hpp"

namespace nimble::replayer {
namespace {

using trace::json;

// Device memory nimble takes for itself, freed on every path.
class DeviceBuffer {
 public:
  DeviceBuffer(const DriverApi& api, std::uint64_t bytes) : api_(api) {
    check(api, api.mem_alloc(&ptr_, std::max<std::uint64_t>(bytes, 1)),
          "cuMemAlloc of " + std::to_string(bytes) + " bytes to save the iteration's memory");
  }
  ~DeviceBuffer() { api_.mem_free(ptr_); }
  CUdeviceptr get() const { return ptr_; }

 private:
  const DriverApi& api_;
  CUdeviceptr ptr_ = 0;
};

class Events {
 public:
  Events(const DriverApi& api, std::size_t n) : api_(api), events_(n, nullptr) {
    for (auto& e : events_) check(api, api.event_create(&e, CU_EVENT_DEFAULT), "cuEventCreate (timing)");
  }
  ~Events() {
    for (auto e : events_) if (e) api_.event_destroy(e);
  }
  CUevent operator[](std::size_t i) const { return events_[i]; }

 private:
  const DriverApi& api_;
  std::vector<CUevent> events_;
};

// One 64-bit FNV-1a hash per written range: equal hashes, equal bytes (for our purposes).
std::vector<std::uint64_t> checksums(const DriverApi& api, const std::vector<MemoryRange>& ranges) {
  std::vector<std::uint64_t> result;
  std::vector<std::uint8_t> host;
  constexpr std::uint64_t kChunk = std::uint64_t{64} << 20;
  for (const MemoryRange& r : ranges) {
    std::uint64_t hash = kByteHashStart;
    for (std::uint64_t done = 0; done < r.size; done += kChunk) {
      const std::uint64_t n = std::min(kChunk, r.size - done);
      host.resize(n);
      check(api, api.memcpy_dtoh(host.data(), r.addr + done, n), "cuMemcpyDtoH (memory check)");
      hash = byte_hash(hash, host.data(), host.size());
    }
    result.push_back(hash);
  }
  return result;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

}  // namespace

std::vector<std::string> bench_refusals(const ReplayPlan& plan) {
  std::vector<std::string> refusals;
  for (const Op& op : plan.ops) {
    if (!is_collective(op)) continue;
    refusals.push_back(describe_op(op) + ": an NCCL collective; replayed on its own it would wait for ranks that are "
                       "not replaying, with a work descriptor NCCL has reused since. Bench a stretch without "
                       "collectives (bracket it with cudaProfilerStart/Stop or an NVTX range and use --capture-range: "
                       "the forward alone, or forward and backward under DDP's no_sync(), since DDP all-reduces "
                       "during the backward), or use nimble run, which leaves collectives to the program");
  }
  return refusals;
}

BenchResult run_bench(const DriverApi& api, const ReplayPlan& plan, const BenchOptions& options) {
  BenchResult result;
  auto step = [&](const std::string& what) {
    if (options.progress) options.progress(what);
  };
  try {
    check(api, api.ctx_synchronize(), "cuCtxSynchronize (waiting for the program's work)");
    for (const MemoryRange& r : plan.written) result.saved_bytes += r.size;
    result.host_functions_skipped = plan.host_functions;
    const std::uint64_t shadow_bytes = plan.shadow_bytes;
    std::size_t free_bytes = 0, total_bytes = 0;
    check(api, api.mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
    if (result.saved_bytes + shadow_bytes > free_bytes / 10 * 9) {
      result.error = "the iteration writes " + std::to_string(result.saved_bytes >> 20) + " MiB and uses " +
                     std::to_string(shadow_bytes >> 20) + " MiB it frees, more than the free device memory (" +
                     std::to_string(free_bytes >> 20) + " MiB) allows saving; nothing was replayed";
      return result;
    }
    step("saving " + std::to_string(result.saved_bytes) + " bytes in " + std::to_string(plan.written.size()) +
         " ranges; " + std::to_string(plan.shadow_sizes.size()) + " shadow allocations in " +
         std::to_string(plan.shadow_bytes) + " bytes (" + std::to_string(plan.shadows_reused) + " reusing another's)");
    DeviceBuffer backup(api, result.saved_bytes);
    Replayer replayer(api, plan);
    CUstream s = replayer.main_stream();
    // Checked memory: what the iteration writes in place, and the shadows.
    std::vector<MemoryRange> checked = plan.written;
    if (replayer.shadow_memory().size > 0) checked.push_back(replayer.shadow_memory());
    auto copy_all = [&](bool save) {
      std::uint64_t offset = 0;
      for (const MemoryRange& r : plan.written) {
        const CUdeviceptr from = save ? r.addr : backup.get() + offset;
        const CUdeviceptr to = save ? backup.get() + offset : r.addr;
        check(api, api.memcpy_dtod_async(to, from, r.size, s), save ? "saving memory" : "restoring memory");
        offset += r.size;
      }
      // Shadows start as zeros for every run, so runs can be compared byte for byte.
      const MemoryRange shadow = replayer.shadow_memory();
      if (shadow.size > 0) check(api, api.memset_d8_async(shadow.addr, 0, shadow.size, s), "clearing shadow memory");
      check(api, api.stream_synchronize(s), save ? "saving memory" : "restoring memory");
    };
    copy_all(/*save=*/true);
    try {
      std::vector<std::uint64_t> reference;
      std::vector<bool> nondeterministic;
      if (options.verify) {
        // Eager replay from the same saved state, a few times: ranges where these disagree
        // among themselves come from nondeterministic kernels, and no backend can match them.
        for (int run = 0; run < std::max(1, options.reference_runs); ++run) {
          copy_all(/*save=*/false);
          step("eager replay (reference " + std::to_string(run + 1) + ")");
          replayer.issue_eager();
          check(api, api.stream_synchronize(s), "eager replay");
          const auto sums = checksums(api, checked);
          if (run == 0) {
            reference = sums;
            nondeterministic.assign(sums.size(), false);
          }
          for (std::size_t i = 0; i < sums.size(); ++i) nondeterministic[i] = nondeterministic[i] || sums[i] != reference[i];
        }
        result.checked_ranges = checked.size();
        result.nondeterministic_ranges =
            static_cast<std::size_t>(std::count(nondeterministic.begin(), nondeterministic.end(), true));
      }
      std::vector<Backend> backends = {Backend::Eager, Backend::Graph};
      if (plan.scheduled) backends.push_back(Backend::StreamGraph);
      backends.push_back(Backend::EdgeGraph);
      const std::size_t n = static_cast<std::size_t>(std::max(1, options.iterations));
      Events events(api, 2 * n);
      for (Backend backend : backends) {
        BackendResult b;
        b.backend = backend_name(backend);
        try {
          step(b.backend);
          CUgraphExec exec = backend == Backend::Eager ? nullptr : replayer.instantiate(backend, &b.graph_nodes);
          auto launch = [&] {
            if (exec) check(api, api.graph_launch(exec, s), "cuGraphLaunch");
            else replayer.issue_eager();
          };
          if (!options.verify) {
            b.verified = "not checked";
          } else if (backend == Backend::Eager) {
            b.verified = "reference";
          } else {
            copy_all(/*save=*/false);
            launch();
            check(api, api.stream_synchronize(s), std::string(b.backend) + " replay");
            const auto sums = checksums(api, checked);
            std::size_t differ = 0;
            for (std::size_t i = 0; i < sums.size(); ++i) {
              if (nondeterministic[i] || sums[i] == reference[i]) continue;
              if (++differ <= 8) b.differing.push_back(checked[i]);
            }
            const std::size_t compared = sums.size() - result.nondeterministic_ranges;
            b.verified = differ == 0 ? "same bytes"
                                     : std::to_string(differ) + " of " + std::to_string(compared) + " ranges differ";
          }
          for (int i = 0; i < options.warmup; ++i) launch();
          for (std::size_t i = 0; i < n; ++i) {
            check(api, api.event_record(events[2 * i], s), "cuEventRecord (timing)");
            launch();
            check(api, api.event_record(events[2 * i + 1], s), "cuEventRecord (timing)");
          }
          check(api, api.stream_synchronize(s), std::string(b.backend) + " timing");
          std::vector<double> times;
          for (std::size_t i = 0; i < n; ++i) {
            float ms = 0;
            check(api, api.event_elapsed_time(&ms, events[2 * i], events[2 * i + 1]), "cuEventElapsedTime");
            times.push_back(ms);
          }
          b.median_ms = percentile(times, 0.5);
          b.p10_ms = percentile(times, 0.1);
          b.p90_ms = percentile(times, 0.9);
        } catch (const ReplayError& e) {
          b.error = e.what();
        }
        result.backends.push_back(std::move(b));
      }
    } catch (...) {
      copy_all(/*save=*/false);
      throw;
    }
    copy_all(/*save=*/false);
  } catch (const ReplayError& e) {
    result.error = e.what();
  } catch (const std::exception& e) {
    result.error = std::string("internal error: ") + e.what();
  }
  return result;
}

}  // namespace nimble::replayer
