// Side exits: a trusted recording left at the same call again and again (a logging step every N
// steps) gets a recording of the stretch from there to its next iteration, entered only from that
// exit. The session asks for the window (take_side_exit_window); the tests add what the hooks
// would have recorded and check what the program then issues.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nimble/replayer/run_session.hpp"
#include "nimble/replayer/side_exits.hpp"
#include "session_util.hpp"

namespace nimble::replayer {
namespace {

using test::call_of;
using test::hand_over;
using test::Log;
using test::recording;
using test::sig;

class SideExitTest : public ::testing::Test {
 protected:
  RunSession session(RunOptions options = {}) {
    options.trial_block = 0;  // trusted at once: side exits are taken only from trusted recordings
    options.side_exit_shortest = 1;  // (the stretches here are three calls long)
    return RunSession(options, [](std::uint64_t) { return false; }, [] { return std::uint64_t{1}; });
  }
  // One iteration of `functions`: how many calls nimble took. A side-exit window asked for on the
  // way is kept in window_ (the hooks take it right after the call that left).
  std::size_t iterate(RunSession& s, const std::vector<std::uint64_t>& functions) {
    std::size_t deferred = 0;
    for (std::uint64_t f : functions) {
      deferred += hand_over(s, sig(f), call_of(f)) == Action::Deferred;
      if (auto w = s.take_side_exit_window()) window_ = w, window_at_ = f;
    }
    return deferred;
  }
  // The training recording, left three times by the logging step: window_ then asks for its stretch.
  void exit_three_times(RunSession& s) {
    s.add(recording("train", train_, log_, piece_));
    for (int i = 0; i < 3; ++i) {
      iterate(s, train_);
      iterate(s, logging_);
    }
  }
  // What the hooks record for window_: its calls, from the exit's call on.
  void add_side_exit(RunSession& s, const std::string& name, const std::vector<std::uint64_t>& functions) {
    ASSERT_TRUE(window_);
    ASSERT_EQ(window_->calls, functions.size());
    RecordingSetup setup = recording(name, functions, log_, piece_);
    setup.side_exit = window_->site;
    s.add(std::move(setup));
    window_.reset();
  }

  Log log_;
  std::size_t piece_ = 1;  // one graph per op: the recording launches as it matches (no false starts)
  std::optional<SideExitWindow> window_;
  std::uint64_t window_at_ = 0;
  // A training step, and the logging step every few steps: one more kernel (7) in the middle.
  const std::vector<std::uint64_t> train_ = {1, 2, 3, 4}, logging_ = {1, 2, 7, 3, 4}, stretch_ = {7, 3, 4};
};

TEST_F(SideExitTest, AnExitTakenAlikeThreeTimesIsRecordedAndReplayedFromThere) {
  RunSession s = session();
  s.add(recording("train", train_, log_, piece_));
  for (int logged = 0; logged < 2; ++logged) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(iterate(s, train_), 4u);
    EXPECT_EQ(iterate(s, logging_), 2u);  // 1 and 2 replayed, then the program's own
    EXPECT_FALSE(window_) << "asked for after " << logged + 1 << " exit(s)";
  }
  for (int i = 0; i < 4; ++i) iterate(s, train_);
  iterate(s, logging_);  // the third: its stretch (three calls each time before) is recorded
  ASSERT_TRUE(window_);
  EXPECT_EQ(window_at_, 7u);
  EXPECT_EQ(window_->site.recording, 0u);
  EXPECT_EQ(window_->site.after_calls, 2u);
  EXPECT_EQ(window_->site.signature, sig(7));
  EXPECT_EQ(window_->of, "train");
  add_side_exit(s, "train.2", stretch_);
  // The side exit is not offered on its own (its first call begins no iteration)...
  EXPECT_FALSE(s.concerns(sig(7)));
  const std::size_t issued = log_.issued;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) EXPECT_EQ(iterate(s, train_), 4u);
    // ... but where its parent leaves: every call of the logging step goes through graphs.
    EXPECT_EQ(iterate(s, logging_), 5u) << round;
  }
  EXPECT_EQ(log_.issued, issued);  // nothing held back had to be issued by nimble
  s.finish("end");
  const Recording& side = *s.recordings()[1];
  EXPECT_EQ(side.state, RecordingState::Replaying);
  EXPECT_EQ(side.short_circuit->summary().iterations_replayed, 3u);
  // The parent's fall-backs there went on in the side exit: no failures of the parent's.
  EXPECT_EQ(s.recordings()[0]->fallbacks_to_side_exits, 3u);
  EXPECT_NE(s.summary_text().find("side exit of train after 2 of its calls"), std::string::npos) << s.summary_text();
}

TEST_F(SideExitTest, AnExitWhereNothingWasLaunchedYetIsTakenOverToo) {
  piece_ = 0;  // one graph per recording: the logging step leaves before any launch (a false start)
  RunSession s = session();
  s.add(recording("train", train_, log_, piece_));
  for (int logged = 0; logged < 3; ++logged) {
    for (int i = 0; i < 3; ++i) iterate(s, train_);
    iterate(s, logging_);
  }
  add_side_exit(s, "train.2", stretch_);
  const std::size_t issued = log_.issued;
  for (int i = 0; i < 3; ++i) iterate(s, train_);
  // The two calls held back are issued as the program made them, then the side exit replays.
  EXPECT_EQ(iterate(s, logging_), 5u);
  EXPECT_EQ(log_.issued, issued + 2);
  EXPECT_EQ(log_.lines.back(), "train.2 launch 0");
  s.finish("end");
  EXPECT_EQ(s.recordings()[1]->short_circuit->summary().iterations_replayed, 1u);
}

TEST_F(SideExitTest, AStretchAfterACompletedIterationThatBeginsNothingIsAnEndExit) {
  // Ten training steps, then a short last batch (its first call, the input copy, has another size:
  // it begins no recording), every epoch.
  RunSession s = session();
  s.add(recording("train", train_, log_, piece_));
  const std::vector<std::uint64_t> short_batch = {8, 2, 3, 4};
  auto epoch = [&] {
    std::size_t deferred = 0;
    for (int i = 0; i < 10; ++i) deferred += iterate(s, train_);
    return deferred + iterate(s, short_batch);
  };
  for (int e = 0; e < 2; ++e) EXPECT_EQ(epoch(), 40u);
  EXPECT_FALSE(window_);
  epoch();
  ASSERT_TRUE(window_);
  EXPECT_EQ(window_at_, 8u);
  EXPECT_EQ(window_->site.after_calls, 4u);  // the whole iteration had matched
  add_side_exit(s, "train.2", short_batch);
  for (int e = 0; e < 3; ++e) EXPECT_EQ(epoch(), 44u) << e;  // the short batch too
  s.finish("end");
  EXPECT_EQ(s.recordings()[1]->short_circuit->summary().iterations_replayed, 3u);
  // Not a fall-back of the training recording's, and it asked for no look.
  EXPECT_EQ(s.recordings()[0]->fallbacks_to_side_exits, 0u);
  EXPECT_TRUE(s.recordings()[0]->short_circuit->summary().fallbacks.empty());
  EXPECT_FALSE(s.wants_recording());
}

TEST_F(SideExitTest, AnExitWhoseStretchChangesLengthIsNotRecordedUntilItHolds) {
  RunSession s = session();
  s.add(recording("train", train_, log_, piece_));
  iterate(s, logging_);
  iterate(s, train_);
  iterate(s, {1, 2, 7, 3, 4, 5});  // one call more after the exit: measured afresh
  iterate(s, train_);
  iterate(s, logging_);  // as long as the first, but not twice in a row
  iterate(s, train_);
  EXPECT_FALSE(window_);
  iterate(s, logging_);
  iterate(s, train_);
  iterate(s, logging_);
  EXPECT_TRUE(window_);
}

TEST_F(SideExitTest, NoWindowWhileTheParentIsOnTrialOrWithSideExitsOff) {
  RunOptions on_trial;  // the default trial: blocks of replayed and plain iterations
  RunOptions off;
  off.trial_block = 0;
  off.side_exits = false;
  for (const RunOptions& o : {on_trial, off}) {
    RunSession s(o, [](std::uint64_t) { return false; }, [] { return std::uint64_t{1}; });
    s.add(recording("train", train_, log_, piece_));
    for (int i = 0; i < 6; ++i) {
      iterate(s, train_);
      iterate(s, logging_);
    }
    EXPECT_FALSE(window_) << (o.side_exits ? "on trial" : "side exits off");
  }
}

TEST_F(SideExitTest, AnIterationThatBeginsAlikeAndLeavesInTheFirstQuarterIsNoSideExit) {
  // An inference service: the recorded batch length's step, and another length's that shares only
  // its first call. Left after one call of eight, before anything launched: the parent's trial says
  // nothing of that step, so no trusted side exit is recorded for it. Left after two of four (the
  // logging step above), or after one of eight once the parent's first graph launched, it is.
  const std::vector<std::uint64_t> step = {1, 2, 3, 4, 5, 6, 7, 8}, other = {1, 9, 10, 11, 12, 13, 14, 15};
  for (std::size_t piece : {std::size_t{0}, std::size_t{1}}) {
    piece_ = piece;  // 0: one graph per recording, launched at its end; 1: a graph per call
    window_.reset();
    RunSession s = session();
    s.add(recording("step", step, log_, piece_));
    for (int i = 0; i < 4; ++i) {
      iterate(s, step);
      iterate(s, other);
    }
    EXPECT_EQ(window_.has_value(), piece == 1) << "piece " << piece;
    s.finish("end");
    EXPECT_EQ(s.recordings()[0]->state, RecordingState::Replaying) << "piece " << piece;
  }
}

TEST_F(SideExitTest, ASideExitGoesWithTheRecordingItLeaves) {
  RunSession s = session();
  exit_three_times(s);
  add_side_exit(s, "train.2", stretch_);
  // The program changes: the training recording keeps falling back and is dropped.
  for (int i = 0; i < 40; ++i) iterate(s, {1, 9, 3, 4});
  ASSERT_EQ(s.recordings()[0]->state, RecordingState::Dropped);
  EXPECT_EQ(s.recordings()[1]->state, RecordingState::Dropped);
  EXPECT_EQ(s.recordings()[1]->dropped_because, "the recording it is a side exit of was dropped");
  s.release_dropped();
  EXPECT_EQ(log_.released, (std::vector<std::string>{"train", "train.2"}));  // the side exit's graphs too
}

// An executor whose launches fail (graph instantiation refused, say).
struct FailingExecutor : Executor {
  Log& log;
  explicit FailingExecutor(Log& l) : log(l) {}
  void launch_segment(std::size_t, const IterationMatcher&) override { throw std::runtime_error("launch refused"); }
  void issue(std::size_t op, const GpuCall&) override { log.lines.push_back("side issue " + std::to_string(op)), ++log.issued; }
};

TEST_F(SideExitTest, ASideExitWhoseFirstLaunchFailsRunsTheExitCallOnceAndIsDropped) {
  RunSession s = session();
  exit_three_times(s);
  ASSERT_TRUE(window_);
  RecordingSetup setup = recording("train.2", stretch_, log_, piece_);
  setup.side_exit = window_->site;
  setup.make_executor = [this](const ReplayPlan&, const std::vector<Segment>&) {
    return std::make_unique<FailingExecutor>(log_);
  };
  s.add(std::move(setup));
  window_.reset();
  iterate(s, train_);
  // The exit's call goes to the side exit, whose launch fails on it: nimble issues it (once), the
  // program must not run it again, and the side exit is dropped.
  EXPECT_EQ(s.on_call(sig(1), call_of(1)), Action::Deferred);
  EXPECT_EQ(s.on_call(sig(2), call_of(2)), Action::Deferred);
  const std::size_t issued = log_.issued;
  EXPECT_EQ(s.on_call(sig(7), call_of(7)), Action::Deferred);
  EXPECT_EQ(log_.issued, issued + 1);
  EXPECT_EQ(log_.lines.back(), "side issue 0");
  EXPECT_EQ(s.recordings()[1]->state, RecordingState::Dropped);
}

TEST_F(SideExitTest, ASideExitWhoseFirstCallKeepsMissingIsDroppedAndRecordedAgain) {
  RunOptions o;
  o.failure_limit = 3;
  RunSession s = session(o);
  exit_three_times(s);
  add_side_exit(s, "train.2", stretch_);
  // The logging kernel's launch shape changes (same signature as the hooks see it): the side exit's
  // first op no longer matches there, and the program runs the step's rest itself.
  KernelCall wider = call_of(7);
  wider.grid[0] = 2;
  auto changed_logging = [&] {
    iterate(s, train_);
    hand_over(s, sig(1), call_of(1));
    hand_over(s, sig(2), call_of(2));
    EXPECT_EQ(hand_over(s, sig(7), wider), Action::Run);
    if (auto w = s.take_side_exit_window()) window_ = w;
    hand_over(s, sig(3), call_of(3));
    hand_over(s, sig(4), call_of(4));
  };
  for (int i = 0; i < 3; ++i) changed_logging();
  EXPECT_EQ(s.recordings()[1]->state, RecordingState::Dropped);
  EXPECT_NE(s.recordings()[1]->dropped_because.find("its first call did not match"), std::string::npos);
  // The exit is measured again: the second window it may ask for comes at its third exit alike.
  EXPECT_FALSE(window_);
  for (int i = 0; i < 3; ++i) changed_logging();
  EXPECT_TRUE(window_);
}

// The program takes `site` with its next call, then makes `stretch` more before the recorded
// iteration begins again: the window the exit asked for, if any.
struct ExitWalk {
  SideExits& exits;
  ExitSite site{0, 3, 42};
  std::size_t call = 0;
  std::optional<SideExitWindow> exit_then(std::size_t stretch) {
    auto w = exits.exited(site, ++call);
    call += stretch;
    exits.iteration_began(call + 1);
    return w;
  }
};

TEST(SideExits, AnExitIsAskedForAtMostTwiceAndNotAfterAStretchTooLong) {
  SideExits::Options o;
  o.longest = 10;
  SideExits exits(o);
  ExitWalk walk{exits};
  const ExitSite site = walk.site;
  EXPECT_FALSE(walk.exit_then(4));
  EXPECT_FALSE(walk.exit_then(4));
  EXPECT_EQ(exits.times_seen(site), 2u);
  auto w = walk.exit_then(4);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->calls, 5u);  // the exit's call and the four after it
  EXPECT_TRUE(walk.exit_then(4));
  EXPECT_FALSE(walk.exit_then(4));  // two windows asked for: no more
  SideExits other(o);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(other.exited(site, 100 * i + 1));
    other.iteration_began(100 * i + 50);  // 49 calls: longer than the longest recorded
  }
  EXPECT_EQ(other.times_seen(site), 0u);
}

// A stretch of a few calls back to the recorded iteration is left to the program: it is never
// asked for, however often it is taken.
TEST(SideExits, AStretchShorterThanTheShortestIsNeverAskedFor) {
  SideExits::Options o;
  o.shortest = 16;
  SideExits exits(o);
  ExitWalk walk{exits};
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(walk.exit_then(14)) << i;  // 15 calls from the exit's on
  EXPECT_EQ(exits.times_seen(walk.site), 0u);
  EXPECT_FALSE(walk.exit_then(15));  // 16: long enough
  EXPECT_FALSE(walk.exit_then(15));
  EXPECT_TRUE(walk.exit_then(15));
}

// The session's default leaves the fixture's three-call stretch to the program.
TEST_F(SideExitTest, AShortStretchGetsNoWindowByDefault) {
  RunOptions options;
  options.trial_block = 0;
  RunSession s(options, [](std::uint64_t) { return false; }, [] { return std::uint64_t{1}; });
  s.add(recording("train", train_, log_, piece_));
  for (int i = 0; i < 5; ++i) {
    iterate(s, train_);
    iterate(s, logging_);
  }
  EXPECT_FALSE(window_);
}

}  // namespace
}  // namespace nimble::replayer
