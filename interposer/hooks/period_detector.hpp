// The automatic capture range (NIMBLE_CAPTURE_RANGE=auto), CUDA-free so CI tests it.
//
// Every task the program issues gets a signature (kind, function, launch shape, copy size).
// The detector keeps a log of them and looks for the smallest period P such that the last
// `repeats` blocks of P signatures are identical. It looks at host synchronisations (a
// `loss.item()` or `torch.cuda.synchronize()` usually ends an iteration, so a period found there
// starts right after it); a program that never synchronises is checked every `check_every`
// tasks instead, and its recorded period may start anywhere in the iteration. Once found, it
// lets `iteration - 1` further periods pass while checking they still match, then records
// exactly one period. A mismatch while waiting goes back to detection. Short periods must cover
// `min_span` tasks and every period must launch a kernel, so start-up patterns (a run of
// parameter uploads: copy, sync, copy, sync) are not taken for the iteration.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nimble::hooks {

// The smallest P (1 <= P <= max_period) whose last `repeats` blocks of P entries of `seq` are
// identical, or 0. With `min_span`, short periods must repeat until they cover that many entries.
// With `kernel`, the last block must contain at least one entry marked true (a kernel).
std::size_t smallest_repeating_period(const std::vector<std::uint64_t>& seq, std::size_t repeats,
                                      std::size_t max_period, std::size_t min_span = 0,
                                      const std::vector<bool>* kernel = nullptr);

// The smallest P (1 <= P <= max_period) whose run back from the end of `seq` (entries equal to the
// one P earlier, with the P before them) spans at least `span` entries and `repeats` copies (and
// `min_span` entries), the last P launching a kernel when `kernel` is given; 0 when none. Layers or
// micro-batches repeated inside a step explain a part of a long span, the step all of it.
std::size_t period_explaining(const std::vector<std::uint64_t>& seq, std::size_t span, std::size_t repeats,
                              std::size_t max_period, std::size_t min_span = 0, const std::vector<bool>* kernel = nullptr);
// The same, trying only `distances` (increasing): every p at which the last entry of `seq` occurred
// before, as EarlierOccurrences gives them. (Every period's run begins so.) With `shortest`, a
// period of fewer entries is passed over, and so is every longer one whose last block lies inside
// that short period's run (more copies of the same short loop): a longer period is taken only if
// its block reaches back past the run (a step that ends with the loop). `short_loop`, when given,
// is set to the period of the short loop passed over (left alone when there was none).
std::size_t period_explaining(const std::vector<std::uint64_t>& seq, const std::vector<std::size_t>& distances,
                              std::size_t span, std::size_t repeats, std::size_t max_period, std::size_t min_span = 0,
                              const std::vector<bool>* kernel = nullptr, std::size_t shortest = 0,
                              std::size_t* short_loop = nullptr);

// A log's entries and where each occurred before, kept beside AutoRange's history: for the last
// entry, the distances back to its earlier occurrences, nearest first, found by following them
// rather than by comparing every distance (the search runs at every host sync, over up to
// max_period distances).
class EarlierOccurrences {
 public:
  void push(std::uint64_t value);      // appended to the log
  void drop_front(std::size_t count);  // the log's first `count` entries are gone
  void clear();
  // The distances p, 1 <= p <= longest, at which the log's last entry occurred before, increasing.
  std::vector<std::size_t> distances(std::size_t longest) const;
  std::size_t size() const { return previous_.size(); }  // entries kept

 private:
  // value -> 1 + the absolute index of its last occurrence, in an open-addressing table (linear
  // probing; `where` 0: an empty slot): a log of values mostly new (shapes that follow the data)
  // made a node allocation and free per entry in a node-based map.
  struct Slot {
    std::uint64_t value = 0, where = 0;
  };
  std::uint64_t& last_of(std::uint64_t value);  // its slot's `where` (0 when new)
  void rebuild(std::size_t capacity);           // into `capacity` slots, values last seen before the log forgotten

  std::vector<std::uint64_t> previous_;  // per entry kept: 1 + the absolute index of its previous occurrence (0: none)
  std::vector<Slot> last_;
  std::size_t used_ = 0;    // slots taken
  std::uint64_t base_ = 0;  // absolute index of the first entry kept
};

// Where a period ending at the log's last entry may begin, for period_explaining: every p < kGram
// at which the last entry occurred before, and every longer p at which the last kGram entries
// occurred before. A period's run check compares at least p entries (two copies at least), so
// for a period of kGram entries or more the last kGram entries equal those p before: every period
// period_explaining can take is among these. The last entry alone gave thousands: a mixture of
// experts syncs every few tasks to read each expert's token count, the same copy and sync each
// time amid shapes that follow the routing, and every earlier sync was a candidate at every sync
// (60,000 host instructions a launch on the CPU probe, overhead-routed).
class PeriodCandidates {
 public:
  static constexpr std::size_t kGram = 16;
  void push(std::uint64_t value);
  void drop_front(std::size_t count);  // the log's first `count` entries are gone
  void clear();
  // The candidates p, 1 <= p <= longest, p within the log kept, increasing.
  std::vector<std::size_t> distances(std::size_t longest) const;

 private:
  std::array<std::uint64_t, kGram> last_{};  // the last kGram entries, the newest at (pushed_ - 1) % kGram
  std::size_t pushed_ = 0;                   // entries pushed since clear()
  std::uint64_t gram_ = 0;                   // rolling hash of the last kGram entries
  EarlierOccurrences grams_;                 // gram_ after each entry kept (as many as the log keeps)
};

// A run of identical blocks that tiles nearly all of a period: a program that reads its loss on
// the host only every N steps has a period of N steps between syncs, and one step is the
// iteration worth recording (N steps would be N times the graphs, and N times longer to find and
// to try). `head`: entries of the period before the run (the window opens after them).
struct SubPeriod {
  std::size_t period = 0;  // 0: none
  std::size_t head = 0;
};
// Within the last `period` entries of `seq`: the smallest q of at least `min_block` entries such
// that one run of at least `repeats` identical blocks of q entries covers at least `cover` (a
// fraction) of them, each block launching a kernel when `kernel` is given. Repeated layers inside
// one iteration are not taken for it: the rest of the iteration (embedding, head, optimizer)
// must then be at most 1 - `cover` of the period.
SubPeriod tiling_sub_period(const std::vector<std::uint64_t>& seq, std::size_t period, std::size_t repeats,
                            double cover, std::size_t min_block = 1, const std::vector<bool>* kernel = nullptr);

// A fingerprint of the last `period` entries of `seq` that does not depend on where the period
// was cut (a sum of mixed signatures and the length): the same iteration found at another
// phase has the same fingerprint.
std::uint64_t period_fingerprint(const std::vector<std::uint64_t>& seq, std::size_t period);
// The same over the `period` entries that end `end` entries before the end of `seq`.
std::uint64_t period_fingerprint(const std::vector<std::uint64_t>& seq, std::size_t period, std::size_t end);

class AutoRange {
 public:
  struct Options {
    std::size_t max_period = std::size_t{1} << 15;  // longest iteration looked for, in tasks
    std::size_t repeats = 3;                        // identical periods needed to believe one
    std::size_t check_every = 256;                  // look this often when nothing synchronises
    // A program that synchronised, then issues this many tasks without (gradient accumulation
    // reading its loss every N steps), is looked at every `quiet_check` tasks for the period that
    // explains `quiet_cover` of what it issued since the sync; otherwise its step is found at the
    // second sync, N steps later. (0: only at syncs, up to max_period.)
    std::size_t quiet_after = 4096;
    std::size_t quiet_check = 2048;
    double quiet_cover = 0.75;
    // A program whose last syncs came close together (JAX autotuning at start-up, then a loop
    // that never reads its loss) is quiet sooner: after twice the longest of its last few gaps
    // between syncs, at least this many tasks, looked at twice as often; a period whose run
    // explains that many tasks is taken even if set-up since the sync is most of the rest.
    // When the look at the last sync found nothing, the next stretch is quiet after half the longest
    // of the last gaps between syncs, at least this many tasks too.
    std::size_t quiet_after_min = 512;
    std::size_t min_span = 32;                      // short periods repeat until they cover this
    // A period of fewer tasks is not an iteration worth recording (nimble run: replaying a few
    // calls saves less than its graph launch and checks cost), nor are more copies of it; detection
    // goes on and takes a longer period that holds more than the short loop (0: any length).
    std::size_t shortest = 0;
    bool require_kernel = true;                     // a period without kernels is not an iteration
    int iteration = 1;                              // record the N-th period after detection
    double sub_period_cover = 0.98;                 // a period found at a sync that is this much one
                                                    // repeated block records that block (0: never)
    // ... when the block has at least this many tasks and the period eight times as many. Each
    // replayed iteration costs nimble run a little (arming on its first call, its segments), which
    // a block this long makes negligible; and shorter periods are found and tried soon enough
    // whole. (A loop of 200 small kernels and a sync stays one iteration of 202 tasks.)
    std::size_t sub_period_min_tasks = 512;
    // A period found at a sync whose window did not repeat it (the program moved on: an eval pass
    // whose first batch differs is found at its last batch, and the window opens on the next
    // training step) is remembered across restart(): met again whole, up to a sync, one
    // occurrence is enough, and the window opens on the next (the third batch of the next pass).
    // Once: a remembered period that diverges again is forgotten. (nimble run; `record` drops
    // such windows as warm-up work.)
    bool remember_diverged = false;
    // Periods already recorded or rejected (`nimble run` keeps looking after its first
    // recording): a candidate with a known fingerprint is passed over and detection goes on.
    std::function<bool(std::uint64_t fingerprint)> known;
    // nimble run: whether a live recording's iteration begins with a task of this signature. A new
    // period is recorded from its first such task, if it has one, rather than from the sync where it
    // was found: another shape of the same loop then begins where the first recording does, so that
    // the program's change of shape comes at the recordings' first calls (a switch between them)
    // rather than after a graph launched (a fall-back). A training step with two host syncs (the
    // GradScaler's inf check, the loss read) was recorded from one in one shape and from the other
    // in the next two, which fell back at every change of shape and were dropped (H200).
    std::function<bool(std::uint64_t signature)> begins_a_recording;
  };

  enum class Action { None, BeginBefore, EndAfter, BeginBeforeEndAfter };
  enum class Phase { Detecting, Waiting, Capturing, Done };

  explicit AutoRange(Options options);

  // One task in issue order; `host_sync` marks host synchronisations (likely iteration ends),
  // `kernel` kernel launches. Returns what to do around this task: open the window before it,
  // close it after it.
  Action on_task(std::uint64_t signature, bool host_sync, bool kernel = true);

  Phase phase() const { return phase_; }
  // The next task fed (if it matches) opens the window: the recorded period starts there.
  bool begins_next() const { return phase_ == Phase::Waiting && remaining_ == 0; }
  std::size_t period() const { return period_; }
  // The period between the syncs when period() is a block repeated inside it (0: not so).
  std::size_t sync_period() const { return match_distance_ != period_ ? match_distance_ : 0; }
  bool diverged() const { return diverged_; }        // the recorded period did not match
  bool anchored_at_sync() const { return anchored_at_sync_; }
  std::size_t detections() const { return detections_; }  // > 1 after a mismatch while waiting
  std::size_t tasks_seen() const { return total_; }
  std::size_t host_syncs_seen() const { return sync_gaps_seen_ + (last_sync_ever_ != 0); }
  std::size_t window_start() const { return window_start_; }  // index of the first recorded task
  std::uint64_t fingerprint() const { return fingerprint_; }  // of the period found (period_fingerprint)
  // Of what the window captured (its last tasks, once Done): the period found's fingerprint unless
  // the window diverged, when it holds something else (another batch length's step).
  std::uint64_t window_fingerprint() const { return period_fingerprint(history_, captured_); }
  // Times in a row a period was found that `known` passed over: the program is in known
  // territory, and looking on costs more than it can find.
  std::size_t known_in_a_row() const { return known_in_a_row_; }
  // Tasks since every look began to find only known periods (0: the last look found nothing, or
  // something new). A loop inside a step (a decoder's time steps, recorded and dropped) is left
  // after a few hundred tasks, and the looks between find nothing until the step has repeated; a
  // step recorded and dropped is found known at every look for as long as the program runs.
  std::size_t known_streak() const { return known_since_ ? total_ - known_since_ : 0; }
  // The period, in tasks, of the last repeating loop passed over for being shorter than
  // Options::shortest (0: none was), kept across restart(): why nothing was taken.
  std::size_t short_loop() const { return short_loop_; }
  std::size_t looks() const { return looks_; }  // searches for a period made so far (each costs)
  // Tasks since the last look passed over the short loop the program is still in (0: not in one).
  std::size_t short_loop_tasks() const { return in_short_loop_ ? total_ - short_loop_since_ : 0; }
  // Looks for a new period from scratch (the history is dropped): after a recording, when the
  // program has moved on to other work. `iteration` > 0 replaces Options::iteration.
  void restart(int iteration = 0);
  int iteration() const { return options_.iteration; }
  // Tasks that ran before detection began, in order (signature, and whether it is a kernel): in
  // the history as if they had been fed, but nothing is decided on them.
  void prime(const std::vector<std::pair<std::uint64_t, bool>>& tasks);

 private:
  bool matches_period() const;
  bool begin_sub_period(std::size_t stretch);
  bool look_while_quiet(bool host_sync);
  std::size_t quiet_threshold() const;
  void note_sync_gap();
  bool met_remembered() const;
  std::size_t phase_after_last_sync(std::size_t p) const;
  void begin_waiting(std::size_t length, std::size_t distance, std::size_t head, std::uint64_t fingerprint, bool at_sync);
  bool is_known(std::size_t length, std::size_t end, std::uint64_t fingerprint) const;
  void found_nothing();  // a look found no period, known or new
  void append(std::uint64_t signature, bool kernel);  // to history_, kernels_ and candidates_
  void trim_history();

  // period_explaining over the history, trying only the candidates_ (where the last 16 tasks
  // occurred before, or the last task for shorter periods), and noting a short loop passed over.
  std::size_t explaining_period(std::size_t span);

  Options options_;
  std::vector<std::uint64_t> history_;
  std::vector<bool> kernels_;  // parallel to history_
  PeriodCandidates candidates_;  // where a period ending at history_'s last task may begin
  Phase phase_ = Phase::Detecting;
  std::size_t total_ = 0;
  std::size_t last_sync_ = 0;       // total_ at the last host sync (0: none yet)
  std::size_t last_sync_ever_ = 0;  // the same, kept across restart()
  std::array<std::size_t, 4> sync_gaps_{};  // the last gaps between syncs (tasks), newest at sync_gaps_seen_ % 4
  std::size_t sync_gaps_seen_ = 0;
  std::size_t last_check_ = 0;
  std::size_t period_ = 0;
  std::size_t match_distance_ = 0;  // the steady tasks repeat at this distance (period_ or the sync period)
  std::size_t remaining_ = 0;       // periods' worth of tasks still to let pass
  std::size_t captured_ = 0;
  std::size_t detections_ = 0;
  std::size_t window_start_ = 0;
  std::uint64_t fingerprint_ = 0;
  std::size_t known_in_a_row_ = 0;
  std::size_t known_since_ = 0;       // total_ when the looks began to find only known periods (0: not so)
  std::size_t short_loop_ = 0;
  bool in_short_loop_ = false;  // the last look passed over a short loop, found nothing else, and it goes on
  // The look at the last sync found nothing: the next stretch is looked at halfway through too, where
  // its loop's run is under way (work that never repeats just before each sync, such as a loss over
  // a data-dependent count of rows, hides the loop from a look at the sync).
  bool sync_look_found_nothing_ = false;
  std::size_t looks_ = 0;
  std::size_t short_loop_since_ = 0;  // total_ when in_short_loop_ was set
  bool diverged_ = false;
  bool anchored_at_sync_ = false;
  std::vector<std::uint64_t> candidate_;   // the period found last at a sync (remember_diverged)
  std::vector<std::uint64_t> remembered_;  // a period whose window diverged, looked for whole
  bool from_remembered_ = false;           // the period waited for is the remembered one
};

// nimble run's choice for a window the range closed (RecordingWindow, when a period was captured).
// One that did not repeat the period found is most likely the program moving on (an eval pass of
// three batches found at its end, then the training step, which begins alike, recorded instead of
// a fourth): it is let go and the range looks on, twice per period; the third time it is written
// after all, as what it holds, unless that is an iteration recorded already. (It was registered
// under the period's fingerprint: an inference service's batch lengths drawn at random wrote one
// length's step in another's name, which was then never recorded, and the first twice; H200.)
class DivergedWindows {
 public:
  static constexpr int kLetGoPerPeriod = 2;
  // Whether to let the closed window go rather than write it. `known`: periods recorded already.
  bool let_go(const AutoRange& range, const std::function<bool(std::uint64_t)>& known);
  // What a written window is registered under: the period found, or what it holds if it diverged.
  static std::uint64_t fingerprint_of(const AutoRange& range) {
    return range.diverged() ? range.window_fingerprint() : range.fingerprint();
  }

 private:
  std::unordered_map<std::uint64_t, int> let_go_;  // windows let go, by the period found's fingerprint
};

}  // namespace nimble::hooks
