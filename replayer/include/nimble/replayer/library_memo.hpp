// Skipping the host work of library calls under `nimble run`. cuDNN spends about 15 us of host
// time in each cudnnBackendExecute before it launches its kernel (H100, PyTorch 2.11, measured
// with NIMBLE_HOST_TIMES); replaying the kernel does not remove that. A library call of a later
// iteration can be skipped when what it would launch is known: the same call site of the
// recorded iteration (the matcher is at its first op), the same inputs (its key: a hash of every
// argument and the library state it reads, computed by the hooks), and those inputs have been
// seen to launch exactly the same ops with the same argument bytes before. Its ops are then taken
// as matched with those bytes, and the library is not called.
//
// Trust is earned, not assumed: a key must have been seen `trust` times with identical launches
// (the recording counts as one) before it is skipped; every `recheck`-th use still runs the real
// call and compares. The recording's sighting is provisional: it ran through another path of
// nimble's hooks, and some cuDNN kernels carry stale stack bytes in their argument structs (host
// addresses that move with the caller's stack depth; 21 of ResNet-50's 53 convolutions). If the
// first later call differs from the recording, that call's launches replace it, and the key must
// then be seen twice more. If the same key ever launches different bytes, or other ops, the key misses
// an input: the call site is never skipped again. A site holds at most `max_keys` keys (buffers
// that ping-pong between iterations give two). Some sites are never skipped (LibrarySite::
// not_skippable): ones whose work the program must do itself (a host copy, a sync), ones ordered
// against another stream (the library's own events do that), ones touching page-locked host
// memory. CUDA-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "nimble/replayer/call_check.hpp"
#include "nimble/replayer/plan.hpp"
#include "settings/settings.hpp"

namespace nimble::replayer {

// One library call of the recorded iteration: ops [first_op, first_op + ops).
struct LibrarySite {
  std::string symbol;
  std::size_t first_op = 0, ops = 0;
  std::optional<std::uint64_t> recorded_key;
  std::string not_skippable;     // why its calls always run (empty: they may be skipped)
  std::string not_skippable_at;  // the op inside it that rules skipping out, described (may be empty)
};
std::vector<LibrarySite> library_sites(const ReplayPlan& plan);

// "a,b, c" -> {a, b, c}; "none" -> {} (NIMBLE_RUN_SKIP_CALLS).
std::set<std::string> function_names(const std::string& list);

struct LibraryMemoOptions {
  std::size_t trust = 2;
  std::size_t recheck = settings::defaults::run_library_recheck;
  std::size_t max_keys = 8;
  std::set<std::string> symbols = function_names(settings::defaults::run_skip_calls);  // whose calls may be skipped
};

using OpPatches = std::vector<std::vector<ArgPatch>>;  // per op of a site

struct LibraryDecision {
  std::size_t site = 0;
  bool skip = false;
  const OpPatches* patches = nullptr;  // when skipping: what the call launched with these inputs
};

struct LibrarySymbolStats {
  std::size_t calls = 0;          // calls at a recorded site, with a key
  std::size_t skipped = 0;
  std::uint64_t run_ns = 0;       // host time of the calls that ran (to estimate what skipping saved)
  std::size_t runs_timed = 0;
};

// A call site given up for good, and why: `reason` is shared by sites given up the same way (the
// exit summary groups by it), `detail` is this site's evidence (the first differing bytes).
struct NeverSkipped {
  std::string symbol;  // cudnnBackendExecute
  std::string at;      // the site's first op, described: "task 12 (kernel name)"
  std::string reason;  // "the same inputs launched other argument bytes (the key misses an input)"
  std::string detail;  // "op 13, bytes at 96: 00b7... then 20ac..." (may be empty)
  std::string text() const;  // "symbol at task 12 (...): reason: detail", one site in full
};

class LibraryMemo {
 public:
  explicit LibraryMemo(const ReplayPlan& plan, LibraryMemoOptions options = {});

  const std::vector<LibrarySite>& sites() const { return sites_; }
  // The site of `symbol` whose first op is `op`, or nullopt.
  std::optional<std::size_t> site_at(std::size_t op, const std::string& symbol) const;

  // A call at `site` with inputs `key` is about to be made. With may_skip false it runs whatever
  // is known (counted as a call; not as a use of the key).
  LibraryDecision decide(std::size_t site, std::uint64_t key, bool may_skip = true);
  // It ran (not skipped) and took `host_ns`. `patches`: what its ops were launched with, when all
  // of the site's ops matched in order during the call; nullopt when they did not.
  void observed(std::size_t site, std::uint64_t key, const std::optional<OpPatches>& patches, std::uint64_t host_ns);

  const std::map<std::string, LibrarySymbolStats>& stats() const { return stats_; }
  // Sites never skipped again, in the order they were given up.
  const std::vector<NeverSkipped>& disabled() const { return disabled_; }
  // Sites of the functions the options name that the recording itself rules out (a host copy, a
  // sync, another stream's order ... inside the call), in the iteration's order.
  const std::vector<NeverSkipped>& unskippable() const { return unskippable_; }

 private:
  struct Entry {
    OpPatches patches;
    std::size_t seen = 0;  // identical launches observed
    bool provisional = false;  // the recording's sighting, not yet confirmed by a later call
    std::size_t uses = 0;
  };
  struct SiteState {
    std::map<std::uint64_t, Entry> keys;
    bool disabled = false;
  };
  void disable(std::size_t site, std::string reason, std::string detail = "");

  LibraryMemoOptions options_;
  const ReplayPlan& plan_;
  std::vector<LibrarySite> sites_;
  std::map<std::size_t, std::size_t> site_by_first_op_;
  std::vector<SiteState> state_;
  std::map<std::string, LibrarySymbolStats> stats_;
  std::vector<NeverSkipped> disabled_;
  std::vector<NeverSkipped> unskippable_;
};

}  // namespace nimble::replayer
