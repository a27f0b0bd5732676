// Scheduler benchmark on synthetic DAGs: time per phase, peak memory, schedule size.
// Shapes: "network" (make_network_dag, the default) or "random" (5 uniformly drawn earlier
// predecessors per task, a structureless stress case). Each size runs in a child process so
// getrusage's peak RSS belongs to that size alone.
//   nimble-sched-bench [--sizes 1000,10000,100000] [--shape network|random] [--seed N] [--repeat R]
//                      [--max-streams K] [--merge-candidates C] [--threads T]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nimble/scheduler/schedule.hpp"
#include "nimble/scheduler/synthetic.hpp"

namespace {

using nimble::scheduler::Options;

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// Schedules the DAG `repeat` times and reports the run with the median total time.
void run_size(std::size_t tasks, bool random_shape, std::uint64_t seed, const Options& options, int repeat) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto dag = random_shape ? nimble::scheduler::make_uniform_random_dag(tasks, 5, seed)
                                : nimble::scheduler::make_network_dag(tasks, seed);
  const double generate_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double rss_before = peak_rss_mib();
  std::vector<nimble::scheduler::Stats> runs;
  for (int r = 0; r < repeat; ++r) runs.push_back(nimble::scheduler::schedule_dag(dag, options).stats);
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.time_ms.total < b.time_ms.total; });
  const auto& s = runs[runs.size() / 2];
  const auto& t = s.time_ms;
  std::printf("| %zu | %zu | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | **%.1f** | %.0f | %.0f | %zu | %zu | %zu | %zu/%zu | %.0f / %.0f / %.0f |\n",
              s.tasks, s.edges, s.meg_edges, t.reduction, t.matching, t.merging, t.limiting, t.waits, t.analysis,
              t.total, rss_before, peak_rss_mib(), s.chains, s.streams, s.waits, s.width_lower_bound,
              s.width_upper_bound, s.serial_us, s.critical_path_us, s.makespan_us);
  std::fprintf(stderr, "  (%zu tasks: generated in %.1f ms; waits before pruning %zu; merge candidates %zu, capped %zu)\n",
               s.tasks, generate_ms, s.waits_before_pruning, s.merge_candidate_pairs, s.merge_capped_heads);
  std::fflush(stdout);
}

std::vector<std::size_t> parse_sizes(const char* text) {
  std::vector<std::size_t> sizes;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    sizes.push_back(std::strtoull(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{1000, 10000, 100000};
  std::uint64_t seed = 1;
  int repeat = 3;
  bool random_shape = false;
  Options options;
  for (int i = 1; i < argc; i += 2) {
    const char* flag = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (value && !std::strcmp(flag, "--sizes")) sizes = parse_sizes(value);
    else if (value && !std::strcmp(flag, "--shape") && (!std::strcmp(value, "network") || !std::strcmp(value, "random"))) random_shape = !std::strcmp(value, "random");
    else if (value && !std::strcmp(flag, "--repeat")) repeat = std::max(1, std::atoi(value));
    else if (value && !std::strcmp(flag, "--seed")) seed = std::strtoull(value, nullptr, 10);
    else if (value && !std::strcmp(flag, "--max-streams")) options.max_streams = static_cast<std::uint32_t>(std::atoi(value));
    else if (value && !std::strcmp(flag, "--merge-candidates")) options.merge_candidates = std::strtoull(value, nullptr, 10);
    else if (value && !std::strcmp(flag, "--threads")) options.threads = static_cast<unsigned>(std::atoi(value));
    else {
      std::fprintf(stderr,
                   "usage: %s [--sizes 1000,10000,100000] [--shape network|random] [--seed N] [--repeat R]\n"
                   "       [--max-streams K] [--merge-candidates C] [--threads T]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("| tasks | edges | MEG edges | reduce ms | match ms | merge ms | limit ms | waits ms | analysis ms | total ms "
              "| RSS before MiB | peak RSS MiB | chains | streams | waits | width lo/hi | serial / critical / schedule us |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  for (std::size_t tasks : sizes) {
    const pid_t child = fork();
    if (child == 0) {
      run_size(tasks, random_shape, seed, options, repeat);
      std::_Exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "size %zu failed\n", tasks);
      return 1;
    }
  }
  return 0;
}
