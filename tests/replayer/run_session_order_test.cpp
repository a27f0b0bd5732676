// The one rule every decision of nimble run must keep, checked on random programs: each call the
// program makes runs exactly once, in the program's order (one stream here), whether the program
// ran it, a recording issued it, or one of its graphs launched it with this iteration's arguments.
// Every call carries a serial number (a kernel's argument bytes, a copy's host address) so that
// the test can tell which call each launched op stood for. The programs are written like the
// corpus's epochs program: training steps, a short last batch, an eval pass, a sync per step;
// the recordings are stretches of it at any phase (a detector may record a prefix of the step, or
// a stretch that begins mid-way), added while the session runs, with trials, --compare blocks,
// graphs cut into small segments, recordings the session asks for, and side exits' recordings
// (the stretch after an exit taken alike, recorded when the session asks and entered from there). A second run adds library
// calls (convolutions of two or three kernels) that nimble skips once it knows what they launch,
// as the hooks decide it: it fails when a recording that ends inside a call lets the call be
// skipped (the wrong result the corpus found on the GPU, 2026-11-26).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "nimble/replayer/run_session.hpp"
#include "session_util.hpp"

namespace nimble::replayer {
namespace {

using test::hand_over;

constexpr std::uint64_t kCopyIn = 70, kCopyOut = 71;  // signatures of the step's host copies

// One call of the program: a kernel (function > 0) or a host copy (kCopyIn / kCopyOut). A kernel
// may be one of a library call's (cuDNN's): its argument bytes then follow from the call's inputs
// (`key`), not from a serial, and nimble may skip the whole call once it knows what it launches.
struct Call {
  std::uint64_t what = 0;
  bool sync_after = false;  // the program reads the result on the host (loss.item())
  std::uint64_t key = 0;    // a library call's inputs (0: not a library kernel)
  std::size_t kernels = 0;  // on a library call's first kernel: how many it launches
  std::int64_t call = -1;   // which library call of the program (numbered as the recorder does)
};

constexpr const char* kLibrary = "cudnnBackendExecute";

// The bytes a library call with inputs `key` launches its kernel `function` with.
std::uint64_t library_bytes(std::uint64_t key, std::uint64_t function) { return (1ull << 62) + key * 1000 + function; }

std::uint64_t signature_of(std::uint64_t what) { return what == kCopyIn || what == kCopyOut ? what : test::sig(what); }

std::vector<std::uint8_t> serial_bytes(std::uint64_t serial) {
  std::vector<std::uint8_t> b(8);
  std::memcpy(b.data(), &serial, 8);
  return b;
}

GpuCall make_call(std::uint64_t what, std::uint64_t serial) {
  if (what == kCopyIn) return CopyCall{CopyDirection::HtoD, 0x500000000000, serial, 4096};
  if (what == kCopyOut) return CopyCall{CopyDirection::DtoH, 0x500000100000, serial, 4};
  return KernelCall{what, {1, 1, 1}, {32, 1, 1}, 0, serial_bytes(serial)};
}

std::uint64_t serial_of(const GpuCall& call) {
  if (const auto* k = std::get_if<KernelCall>(&call)) {
    std::uint64_t s = 0;
    std::memcpy(&s, k->args.data(), 8);
    return s;
  }
  const auto& c = std::get<CopyCall>(call);
  return c.direction == CopyDirection::HtoD ? c.src : c.dst;
}

// Launches report the serial of the call each op stands for: its recorded arguments with this
// iteration's patches, or a host copy's host end.
struct SerialExecutor : Executor {
  const ReplayPlan& plan;
  const std::vector<Segment>& segments;
  std::vector<std::uint64_t>& executed;
  SerialExecutor(const ReplayPlan& p, const std::vector<Segment>& s, std::vector<std::uint64_t>& e)
      : plan(p), segments(s), executed(e) {}
  void launch_segment(std::size_t segment, const IterationMatcher& m) override {
    for (std::size_t op = segments[segment].begin; op < segments[segment].end; ++op) {
      const Op& o = plan.ops[op];
      if (o.kind == OpKind::Copy) {
        executed.push_back(m.host_ends()[op]);
        continue;
      }
      std::vector<std::uint8_t> args = o.kernel.args;
      for (const ArgPatch& p : m.patches()[op]) std::memcpy(args.data() + p.offset, p.bytes.data(), p.bytes.size());
      std::uint64_t s = 0;
      std::memcpy(&s, args.data(), 8);
      executed.push_back(s);
    }
  }
  void issue(std::size_t, const GpuCall& call) override { executed.push_back(serial_of(call)); }
};

Op op_of(const Call& c) {
  const std::uint64_t what = c.what;
  Op op;
  if (what == kCopyIn || what == kCopyOut) {
    op.kind = OpKind::Copy;
    op.name = "memcpy";
    op.copy.direction = what == kCopyIn ? CopyDirection::HtoD : CopyDirection::DtoH;
    op.copy.bytes = what == kCopyIn ? 4096 : 4;
    (what == kCopyIn ? op.copy.dst : op.copy.src) = what == kCopyIn ? 0x500000000000 : 0x500000100000;
    return op;
  }
  op.kind = OpKind::Kernel;
  op.name = "k" + std::to_string(what);
  op.kernel.function = what;
  op.kernel.block[0] = 32;
  op.kernel.args = serial_bytes(c.key ? library_bytes(c.key, what) : 0);  // 0: never a program call's serial
  op.kernel.param_offsets = {0};
  op.kernel.param_sizes = {8};
  if (c.key) {
    op.library_call = c.call;
    op.library_symbol = kLibrary;
    op.library_key = c.key;
  }
  return op;
}

class Program {
 public:
  Program(std::uint32_t seed, RunOptions options)
      : rng_(seed), s_(options, [](std::uint64_t) { return false; }, [this] { return now_; }) {}

  // An epoch: training steps, a short last batch (another kernel mid-way), an eval pass.
  // With libraries, kernels 21-23 are one convolution (inputs alternating between two buffers, as
  // ping-pong activations do), 31-32 another, 41-42 the eval step's.
  std::vector<Call> epoch() {
    std::vector<Call> calls;
    auto step = [&](const std::vector<std::uint64_t>& kernels, bool copy_out, std::uint64_t parity) {
      calls.push_back({kCopyIn});
      for (std::size_t i = 0; i < kernels.size(); ++i) {
        const std::uint64_t k = kernels[i];
        if (!libraries_ || k < 20) {
          calls.push_back({k});
          continue;
        }
        const std::uint64_t key = k < 30 ? 1 + parity : k < 40 ? 5 : 9;
        const bool first = i == 0 || kernels[i - 1] / 10 != k / 10;
        std::size_t n = 0;
        while (i + n < kernels.size() && kernels[i + n] / 10 == k / 10) ++n;
        if (first) ++library_calls_;
        calls.push_back({k, false, key, first ? n : 0, library_calls_});
      }
      if (copy_out) calls.push_back({kCopyOut, true});
    };
    const int train = 3 + static_cast<int>(rng_() % 5);
    for (int i = 0; i < train; ++i) step({1, 21, 22, 23, 2, 3, 31, 32, 4, 5, 6, 7, 8}, true, i % 2);
    step({1, 21, 22, 23, 2, 3, 12, 5, 6, 7, 8}, true, 0);  // the short last batch
    const int eval = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < eval; ++i) step({1, 41, 42, 9, 10}, true, 0);
    return calls;
  }

  // A stretch of `calls` as a recording: `length` calls from `at` (a side exit's when `side_exit`).
  void record(const std::vector<Call>& calls, std::size_t at, std::size_t length,
              std::optional<ExitSite> side_exit = std::nullopt) {
    RecordingSetup setup;
    setup.side_exit = side_exit;
    setup.name = "rec" + std::to_string(s_.recordings().size()) + "@" + std::to_string(at) + "+" + std::to_string(length);
    for (std::size_t i = at; i < at + length && i < calls.size(); ++i) {
      setup.plan.ops.push_back(op_of(calls[i]));
      setup.call_signatures.push_back(signature_of(calls[i].what));
    }
    if (setup.plan.ops.empty()) return;
    setup.segments = segments_of(setup.plan, 1 + rng_() % 4);
    setup.first_signature = setup.call_signatures.front();
    setup.skip_library = libraries_;
    setup.library.symbols = {kLibrary};
    std::vector<std::uint64_t>& executed = executed_;
    setup.make_executor = [&executed](const ReplayPlan& p, const std::vector<Segment>& s) {
      return std::make_unique<SerialExecutor>(p, s, executed);
    };
    names_ += setup.name + " ";
    s_.add(std::move(setup));
  }

  void run(const std::vector<Call>& calls, bool eager) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const Call& c = calls[i];
      if (c.kernels > 0 && !eager) {
        i += library_call(calls, i) - 1;
        window_.reset();  // (asked for inside a library call: the hooks' window would open mid-call; not modelled)
        continue;
      }
      issue(c, eager);
      if (!window_) continue;
      // The session wants the stretch from this call recorded (a side exit): the hooks pause it and
      // record that many calls, which run eagerly, then add the recording.
      const SideExitWindow w = *window_;
      window_.reset();
      s_.interrupt("recording a side exit");
      for (std::size_t k = i + 1; k < i + w.calls && k < calls.size(); ++k) issue(calls[k], /*eager=*/true);
      record(calls, i, w.calls, w.site);
      i += w.calls - 1;
    }
  }

  void use_libraries() { libraries_ = true; }

  RunSession& session() { return s_; }
  std::size_t skipped_calls() const { return skipped_; }
  std::mt19937& rng() { return rng_; }
  std::size_t requests() const { return requests_; }

  // Where the executed order first departs from the program's, or "" when they are equal.
  std::string first_difference() const {
    for (std::size_t i = 0; i < std::max(issued_.size(), executed_.size()); ++i) {
      const std::uint64_t want = i < issued_.size() ? issued_[i] : 0, got = i < executed_.size() ? executed_[i] : 0;
      if (want == got) continue;
      std::ostringstream out;
      out << "at position " << i << ": the program's call " << want << ", executed " << got << " (" << issued_.size()
          << " calls, " << executed_.size() << " executed; recordings " << names_ << ")";
      return out.str();
    }
    return "";
  }

 private:
  void issue(const Call& c, bool eager) {
    const std::uint64_t serial = c.key ? library_bytes(c.key, c.what) : ++serial_;
    issued_.push_back(serial);
    bool ran = true;
    if (!eager) ran = hand_over(s_, signature_of(c.what), make_call(c.what, serial), &requests_) == Action::Run;
    if (!eager) {  // as the hooks do: taken after every call, used only when the program runs it
      std::optional<SideExitWindow> w = s_.take_side_exit_window();
      if (w && ran) window_ = w;
    }
    if (ran) executed_.push_back(serial);
    now_ += ran ? 10 : 6;  // replay is faster: trials keep their recordings
    if (c.sync_after && !eager) s_.on_host_visible_point("synchronized a stream");
  }

  // The library call whose first kernel is calls[first], as nimble run's hooks see it
  // (library_call_begins / library_call_ended): skipped when the memo knows what it launches,
  // else made, and what its kernels matched shown to the memo. Returns its kernels.
  std::size_t library_call(const std::vector<Call>& calls, std::size_t first) {
    const Call& head = calls[first];
    const std::optional<std::size_t> site = s_.library_site(kLibrary);
    Recording* active = s_.active();
    std::size_t started = 0;
    if (site) {
      const LibraryDecision d = active->memo->decide(*site, head.key);
      if (d.skip) {
        for (std::size_t k = 0; k < head.kernels; ++k) issued_.push_back(library_bytes(head.key, calls[first + k].what));
        ++skipped_;
        s_.on_skipped_call(*d.patches);
        now_ += 6;
        return head.kernels;
      }
      started = active->short_circuit->iterations_started();
    }
    for (std::size_t k = 0; k < head.kernels; ++k) issue(calls[first + k], false);
    if (site) active->memo->observed(*site, head.key, whole_call_launches(*active, *site, started), 1);
    return head.kernels;
  }

  std::mt19937 rng_;
  std::uint64_t now_ = 1, serial_ = 0;
  RunSession s_;
  std::vector<std::uint64_t> issued_, executed_;
  std::size_t requests_ = 0;
  std::string names_;
  bool libraries_ = false;
  std::int64_t library_calls_ = 0;
  std::size_t skipped_ = 0;
  std::optional<SideExitWindow> window_;  // asked for by the call just issued
};

RunOptions random_options(std::mt19937& rng) {
  RunOptions o;
  const std::size_t blocks[] = {0, 1, 2, 4};
  o.trial_block = blocks[rng() % 4];
  if (rng() % 5 == 0) o.compare_block = 1 + rng() % 3;
  o.max_recordings = 1 + rng() % 4;
  o.failure_limit = 4 + rng() % 16;
  o.side_exit_shortest = 1 + rng() % 3;  // the random programs' stretches are a few calls long
  return o;
}

struct Exercised {
  std::size_t replayed = 0, false_starts = 0, taken_over = 0, fallbacks = 0, skipped = 0, side_exits = 0;
};

// 400 random programs and recordings; the first failure names its seed.
Exercised run_random_programs(bool libraries) {
  Exercised x;
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    std::mt19937 options_rng(seed);
    Program p(seed, random_options(options_rng));
    if (libraries) p.use_libraries();
    std::vector<Call> first = p.epoch();
    p.run(first, /*eager=*/true);  // the stretch the detector saw
    const std::size_t recordings = 1 + p.rng()() % 3;
    for (std::size_t r = 0; r < recordings; ++r) {
      const std::size_t at = p.rng()() % first.size(), length = 1 + p.rng()() % 30;
      p.record(first, at, length);
    }
    for (int e = 0; e < 12; ++e) {
      std::vector<Call> calls = p.epoch();
      if (p.rng()() % 4 == 0) {  // the hooks record another stretch: its calls run eagerly
        p.session().interrupt("recording another iteration");
        const std::size_t at = p.rng()() % calls.size(), length = 1 + p.rng()() % 30;
        p.run(calls, /*eager=*/true);
        p.record(calls, at, length);
        continue;
      }
      p.run(calls, /*eager=*/false);
    }
    p.session().finish("end");
    const std::string diff = p.first_difference();
    EXPECT_EQ(diff, "") << "seed " << seed << (libraries ? ", with library calls" : "");
    if (!diff.empty()) return x;
    x.replayed += p.session().iterations_replayed();
    x.skipped += p.skipped_calls();
    for (const auto& r : p.session().recordings()) {
      x.false_starts += r->short_circuit->summary().false_starts;
      for (const auto& [why, n] : r->short_circuit->summary().fallbacks) x.fallbacks += n;
      x.taken_over += r->false_starts_taken_over;
      if (r->exit_of) x.side_exits += r->short_circuit->replayed_so_far();
    }
  }
  return x;
}

TEST(RunSessionOrder, EveryCallRunsOnceInTheProgramsOrderOnRandomProgramsAndRecordings) {
  const Exercised x = run_random_programs(/*libraries=*/false);
  // The programs exercise what the rule is about (about 12,000, 700, 60, 5,000 and 2,000 of each).
  EXPECT_GT(x.replayed, 2000u);
  EXPECT_GT(x.false_starts, 200u);
  EXPECT_GT(x.taken_over, 20u);
  EXPECT_GT(x.fallbacks, 1000u);
  EXPECT_GT(x.side_exits, 1000u) << "iterations replayed by side exits' recordings";
}

// The same with convolutions nimble may skip (the hooks' memo logic): a skipped call's kernels
// run with the bytes its inputs were seen to launch, and a recording that ends inside a call
// (a stretch that stops after two of its three kernels) must never let the call be skipped.
TEST(RunSessionOrder, SkippedLibraryCallsLaunchExactlyTheirWorkOnRandomProgramsAndRecordings) {
  const Exercised x = run_random_programs(/*libraries=*/true);
  EXPECT_GT(x.replayed, 2000u);
  EXPECT_GT(x.skipped, 1000u);
}

}  // namespace
}  // namespace nimble::replayer
