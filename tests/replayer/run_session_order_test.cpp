// The one rule every decision of nimble run must keep, checked on random programs: each call the
// program makes runs exactly once, in the program's order (one stream here), whether the program
// ran it, a recording issued it, or one of its graphs launched it with this iteration's arguments.
// Every call carries a serial number (a kernel's argument bytes, a copy's host address) so that
// the test can tell which call each launched op stood for. The programs are written like the
// corpus's epochs program: training steps, a short last batch, an eval pass, a sync per step;
// the recordings are stretches of it at any phase (a detector may record a prefix of the step, or
// a stretch that begins mid-way), added while the session runs, with trials, --compare blocks,
// graphs cut into small segments, and recordings the session asks for.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
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

// One call of the program: a kernel (function > 0) or a host copy (kCopyIn / kCopyOut).
struct Call {
  std::uint64_t what = 0;
  bool sync_after = false;  // the program reads the result on the host (loss.item())
};

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

Op op_of(std::uint64_t what) {
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
  op.kernel.args = serial_bytes(0);  // the recording's own serials are never a program call's
  op.kernel.param_offsets = {0};
  op.kernel.param_sizes = {8};
  return op;
}

class Program {
 public:
  Program(std::uint32_t seed, RunOptions options)
      : rng_(seed), s_(options, [](std::uint64_t) { return false; }, [this] { return now_; }) {}

  // An epoch: training steps, a short last batch (another kernel mid-way), an eval pass.
  std::vector<Call> epoch() {
    std::vector<Call> calls;
    auto step = [&](const std::vector<std::uint64_t>& kernels, bool copy_out) {
      calls.push_back({kCopyIn});
      for (std::uint64_t k : kernels) calls.push_back({k});
      if (copy_out) calls.push_back({kCopyOut, true});
    };
    const int train = 3 + static_cast<int>(rng_() % 5);
    for (int i = 0; i < train; ++i) step({1, 2, 3, 4, 5, 6, 7, 8}, true);
    step({1, 2, 3, 12, 5, 6, 7, 8}, true);  // the short last batch
    const int eval = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < eval; ++i) step({1, 9, 10}, true);
    return calls;
  }

  // A stretch of `calls` as a recording: `length` calls from `at`.
  void record(const std::vector<Call>& calls, std::size_t at, std::size_t length) {
    RecordingSetup setup;
    setup.name = "rec" + std::to_string(s_.recordings().size()) + "@" + std::to_string(at) + "+" + std::to_string(length);
    for (std::size_t i = at; i < at + length && i < calls.size(); ++i) {
      setup.plan.ops.push_back(op_of(calls[i].what));
      setup.call_signatures.push_back(signature_of(calls[i].what));
    }
    if (setup.plan.ops.empty()) return;
    setup.segments = segments_of(setup.plan, 1 + rng_() % 4);
    setup.first_signature = setup.call_signatures.front();
    setup.skip_library = false;
    std::vector<std::uint64_t>& executed = executed_;
    setup.make_executor = [&executed](const ReplayPlan& p, const std::vector<Segment>& s) {
      return std::make_unique<SerialExecutor>(p, s, executed);
    };
    names_ += setup.name + " ";
    s_.add(std::move(setup));
  }

  void run(const std::vector<Call>& calls, bool eager) {
    for (const Call& c : calls) {
      const std::uint64_t serial = ++serial_;
      issued_.push_back(serial);
      bool ran = true;
      if (!eager) ran = hand_over(s_, signature_of(c.what), make_call(c.what, serial), &requests_) == Action::Run;
      if (ran) executed_.push_back(serial);
      now_ += ran ? 10 : 6;  // replay is faster: trials keep their recordings
      if (c.sync_after && !eager) s_.on_host_visible_point("synchronized a stream");
    }
  }

  RunSession& session() { return s_; }
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
  std::mt19937 rng_;
  std::uint64_t now_ = 1, serial_ = 0;
  RunSession s_;
  std::vector<std::uint64_t> issued_, executed_;
  std::size_t requests_ = 0;
  std::string names_;
};

RunOptions random_options(std::mt19937& rng) {
  RunOptions o;
  const std::size_t blocks[] = {0, 1, 2, 4};
  o.trial_block = blocks[rng() % 4];
  if (rng() % 5 == 0) o.compare_block = 1 + rng() % 3;
  o.max_recordings = 1 + rng() % 4;
  o.failure_limit = 4 + rng() % 16;
  return o;
}

TEST(RunSessionOrder, EveryCallRunsOnceInTheProgramsOrderOnRandomProgramsAndRecordings) {
  std::size_t replayed = 0, false_starts = 0, taken_over = 0, fallbacks = 0;
  for (std::uint32_t seed = 1; seed <= 400; ++seed) {
    std::mt19937 options_rng(seed);
    Program p(seed, random_options(options_rng));
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
    ASSERT_EQ(diff, "") << "seed " << seed;
    replayed += p.session().iterations_replayed();
    for (const auto& r : p.session().recordings()) {
      false_starts += r->short_circuit->summary().false_starts;
      for (const auto& [why, n] : r->short_circuit->summary().fallbacks) fallbacks += n;
      taken_over += r->false_starts_taken_over;
    }
  }
  // The programs exercise what the rule is about (about 8,000, 800, 100 and 5,000 of each).
  EXPECT_GT(replayed, 2000u);
  EXPECT_GT(false_starts, 200u);
  EXPECT_GT(taken_over, 20u);
  EXPECT_GT(fallbacks, 1000u);
}

}  // namespace
}  // namespace nimble::replayer
