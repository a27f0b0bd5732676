// Where the program leaves a trusted recording's iteration the same way again and again (a
// logging step every N steps: one more kernel in the middle; the first eval batch, which a training
// recording takes first, every epoch), and whether the stretch from there to the next recorded
// iteration is worth recording. Like a tracing JIT's side traces: an exit taken often enough gets
// its own trace, entered only from that exit. CUDA-free; RunSession asks it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nimble::replayer {

// Where an iteration was left: the recording (its index in the session), the calls of its iteration
// matched before, and the call that did not match (its signature).
struct ExitSite {
  std::size_t recording = 0;
  std::size_t after_calls = 0;
  std::uint64_t signature = 0;
  bool operator==(const ExitSite& other) const {
    return recording == other.recording && after_calls == other.after_calls && signature == other.signature;
  }
};

// What the hooks record at an exit: a window that opens with the exit's call and closes after
// `calls` calls (host syncs inside are recorded too, and not counted): the stretch to the next
// recorded iteration, as long as it was each time before.
struct SideExitWindow {
  ExitSite site;
  std::size_t calls = 0;
  std::string of;  // the recording left (its trace), for the trace's capture section
};

class SideExits {
 public:
  struct Options {
    std::size_t seen_before = 2;       // exits followed by stretches of one length before one is recorded
    std::size_t longest = 1 << 15;     // a longer stretch is not recorded (the program moved on)
    std::size_t shortest = 1;          // nor a shorter one (what it could save, the program's calls do)
    std::size_t attempts = 2;          // windows asked for per exit (a recording that failed may be made again)
    std::size_t max_sites = 64;        // exits remembered (the first ones; later ones are not)
  };
  SideExits() = default;
  explicit SideExits(Options options) : options_(options) {}

  // The program left at `site` with its `call`-th call (a running count). Returns the window to
  // record from this very call when the exit was taken `seen_before` times, each followed by a
  // stretch of the same length; otherwise the stretch from here is measured.
  std::optional<SideExitWindow> exited(const ExitSite& site, std::size_t call);
  // A recorded iteration began with the `call`-th call: the stretch since the exit ends before it.
  void iteration_began(std::size_t call);
  // The stretch under way is not the program's alone (nimble recorded meanwhile): not measured.
  void abandon() { pending_.reset(); }
  // How many times in a row the stretch after `site` had the same length (0: never measured).
  std::size_t times_seen(const ExitSite& site) const;

 private:
  struct Seen {
    ExitSite site;
    std::size_t length = 0;   // calls from the exit's call to the next recorded iteration's first
    std::size_t same = 0;     // stretches of that length in a row
    std::size_t asked = 0;    // windows asked for
  };
  Seen* find(const ExitSite& site);
  const Seen* find(const ExitSite& site) const;

  Options options_;
  std::vector<Seen> seen_;
  struct Pending {
    ExitSite site;
    std::size_t call = 0;
  };
  std::optional<Pending> pending_;
};

}  // namespace nimble::replayer
