// The process guard on synthetic ticks: when it begins judging, when a span may switch, and what
// it decides from the spans' times per call.
#include "nimble/replayer/process_guard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "nimble/replayer/run_report.hpp"
#include "nimble/replayer/run_session.hpp"
#include "session_util.hpp"

namespace nimble::replayer {
namespace {

// A program whose calls cost `paused_ns` each while nimble run is paused and `running_ns` while it
// runs, driven through the guard one tick per `step` calls; every tick can switch, is settled, and
// comes at a host sync (each step of `step` calls ends with one).
struct Program {
  ProcessGuard guard;
  double paused_ns, running_ns;
  std::size_t calls = 0;
  double ns = 1e9;
  std::vector<GuardAction> actions;
  double resumed_ns = 0;  // added to the first step after each resume (replay warming up again)
  // Runs `ticks` ticks of `step` calls; `extra_ns` is added to the clock before tick `pause_at`.
  void run(std::size_t ticks, std::size_t step = 64, std::size_t pause_at = static_cast<std::size_t>(-1),
           double extra_ns = 0) {
    for (std::size_t t = 0; t < ticks; ++t) {
      calls += step;
      ns += static_cast<double>(step) * (guard.paused() ? paused_ns : running_ns);
      if (t == pause_at) ns += extra_ns;
      if (!actions.empty() && actions.back() == GuardAction::Resume && t > 0 && last_resumed_ != actions.size()) {
        ns += resumed_ns;
        last_resumed_ = actions.size();
      }
      const GuardView view{.calls = calls, .ns = static_cast<std::uint64_t>(ns), .replaying = true, .settled = true,
                           .can_switch = true, .at_host_point = true};
      const GuardAction a = guard.tick(view);
      if (a != GuardAction::None) actions.push_back(a);
      if (a == GuardAction::StepAside) return;
    }
  }
  std::size_t last_resumed_ = 0;
};

// The guard kept nimble run, its last judgement paused over running `ratio` (within `tolerance`).
void expect_kept_at(const ProcessGuard& guard, double ratio, double tolerance) {
  EXPECT_EQ(guard.state(), ProcessGuard::State::Kept);
  ASSERT_TRUE(guard.last_ratio());
  EXPECT_NEAR(*guard.last_ratio(), ratio, tolerance);
}

GuardOptions options(std::size_t spans = 4) {
  return {.spans = spans, .span_calls = 256, .keep_above = 1.01, .quick_keep = 1.08, .rejudge_calls = 1 << 14, .lead = 0};
}

TEST(ProcessGuard, WaitsForSomethingReplayedAndAHostSyncWithNothingUnderWay) {
  ProcessGuard guard(options());
  EXPECT_EQ(guard.tick({.calls = 64, .ns = 1, .replaying = false, .settled = true, .can_switch = true, .at_host_point = true}),
            GuardAction::None);
  EXPECT_EQ(guard.tick({.calls = 128, .ns = 2, .replaying = true, .settled = false, .can_switch = true, .at_host_point = true}),
            GuardAction::None);
  EXPECT_EQ(guard.tick({.calls = 192, .ns = 3, .replaying = true, .settled = true, .can_switch = false, .at_host_point = true}),
            GuardAction::None);
  // Nothing under way, but not where the program waited for the GPU.
  EXPECT_EQ(guard.tick({.calls = 200, .ns = 3, .replaying = true, .settled = true, .can_switch = true}), GuardAction::None);
  EXPECT_EQ(guard.state(), ProcessGuard::State::Waiting);
  EXPECT_EQ(guard.tick({.calls = 256, .ns = 4, .replaying = true, .settled = true, .can_switch = true, .at_host_point = true}),
            GuardAction::Pause);
  EXPECT_EQ(guard.state(), ProcessGuard::State::Judging);
  EXPECT_TRUE(guard.paused());
}

TEST(ProcessGuard, JudgingBeginsOnlyAfterReplayHasRunFourTimesWhatItsPausedSpansTake) {
  GuardOptions o = options();  // 4 spans of 256 calls: judged from 4 x 4 x 256 calls after the first replay
  o.lead = 4;
  Program p{ProcessGuard(o), 100, 104};
  p.calls = 5000;  // (calls before anything replayed do not count)
  p.run(4096 / 64 - 1);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::Waiting);
  EXPECT_TRUE(p.actions.empty());
  p.run(2);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::Judging);
  ASSERT_EQ(p.actions.size(), 1u);
  EXPECT_EQ(p.actions[0], GuardAction::Pause);
}

TEST(ProcessGuard, WantsTheHostSyncsOnlyOnceAJudgementIsDue) {
  GuardOptions o = options();
  o.lead = 4;
  Program p{ProcessGuard(o), 100, 104};
  EXPECT_FALSE(p.guard.wants_host_syncs(0));  // nothing replayed yet: the hooks take no lock at a sync
  p.run(1);
  EXPECT_FALSE(p.guard.wants_host_syncs(p.calls));
  EXPECT_TRUE(p.guard.wants_host_syncs(p.calls + 4096));
  p.run(1000);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::SteppedAside);
  EXPECT_FALSE(p.guard.wants_host_syncs(p.calls));
  Program kept{ProcessGuard(o), 120, 100};
  for (int t = 0; t < 1000 && kept.guard.state() != ProcessGuard::State::Kept; ++t) kept.run(1);
  ASSERT_EQ(kept.guard.state(), ProcessGuard::State::Kept);
  EXPECT_FALSE(kept.guard.wants_host_syncs(kept.calls));
  EXPECT_TRUE(kept.guard.wants_host_syncs(kept.calls + (1 << 14)));
}

TEST(ProcessGuard, ASpanEndsAtAHostSyncAfterItsCalls) {
  ProcessGuard guard(options());
  // A settled, replaying program at `calls` (its clock `ns`), at a host sync or not.
  const auto tick = [&](std::size_t calls, std::uint64_t ns, bool host_sync, bool can_switch = true,
                        std::size_t longest_iteration = 400) {
    return guard.tick({.calls = calls, .ns = ns, .replaying = true, .settled = true, .can_switch = can_switch,
                       .at_host_point = host_sync, .longest_iteration = longest_iteration});
  };
  ASSERT_EQ(tick(0, 0, true, true, 0), GuardAction::Pause);
  EXPECT_EQ(tick(200, 200, true, true, 0), GuardAction::None);
  // A recorded iteration's worth longer than span_calls makes the span that long.
  EXPECT_EQ(tick(300, 300, true), GuardAction::None);
  // Long enough, but the GPU may still be working on what the span queued.
  EXPECT_EQ(tick(421, 421, false), GuardAction::None);
  EXPECT_EQ(tick(422, 422, true), GuardAction::Resume);
  EXPECT_FALSE(guard.paused());
  EXPECT_EQ(guard.paused_spans(), (std::vector<double>{1.0}));
  // Running, it needs a host sync with nothing under way; its clock starts at the first such moment
  // an iteration's worth of calls after resuming (the iteration replayed right after a pause warms up).
  EXPECT_EQ(tick(900, 900, false), GuardAction::None);
  EXPECT_EQ(tick(901, 901, true, /*can_switch=*/false), GuardAction::None);
  EXPECT_EQ(tick(902, 5000, true), GuardAction::None);
  EXPECT_EQ(tick(1301, 5399, true), GuardAction::None);
  EXPECT_EQ(tick(1302, 5400, true), GuardAction::Pause);
  EXPECT_EQ(guard.running_spans(), (std::vector<double>{1.0}));
}

TEST(ProcessGuard, APausedSpanWithoutAHostSyncResumesAfterFourSpansWorthUntimed) {
  ProcessGuard guard(options());
  ASSERT_EQ(guard.tick({.calls = 0, .ns = 0, .replaying = true, .settled = true, .can_switch = true, .at_host_point = true}),
            GuardAction::Pause);
  EXPECT_EQ(guard.tick({.calls = 1023, .ns = 1023, .replaying = true, .settled = true, .can_switch = true}), GuardAction::None);
  EXPECT_EQ(guard.tick({.calls = 1024, .ns = 1024, .replaying = true, .settled = true, .can_switch = true}), GuardAction::Resume);
  EXPECT_TRUE(guard.paused_spans().empty());
  EXPECT_EQ(guard.spoiled_spans(), 1u);
  // The running span began at no host sync: not timed either.
  EXPECT_EQ(guard.tick({.calls = 1400, .ns = 1400, .replaying = true, .settled = true, .can_switch = true,
                        .at_host_point = true}),
            GuardAction::None);  // (its warm-up ends at this host sync; the span is timed from here)
  EXPECT_EQ(guard.tick({.calls = 1700, .ns = 1700, .replaying = true, .settled = true, .can_switch = true,
                        .at_host_point = true}),
            GuardAction::Pause);
  EXPECT_EQ(guard.running_spans(), (std::vector<double>{1.0}));
  EXPECT_EQ(guard.spoiled_spans(), 1u);
}

// A program whose GPU runs behind its host, waited for only every `read_every` steps (gradient
// accumulation reading its loss every 10 optimizer steps): each call costs the host `host_*` ns and
// the GPU `gpu_*` ns, paused or running. The guard must weigh what the program takes, not what the
// host spends issuing it.
struct AsyncProgram {
  ProcessGuard guard;
  double host_paused, host_running, gpu_paused, gpu_running;
  std::size_t step_calls = 100, read_every = 10;
  std::size_t calls = 0;
  double host = 1e9, gpu_free = 1e9;
  void run(std::size_t steps) {
    for (std::size_t s = 0; s < steps && guard.state() != ProcessGuard::State::SteppedAside; ++s) {
      for (std::size_t c = 0; c < step_calls; ++c) {
        host += guard.paused() ? host_paused : host_running;
        gpu_free = std::max(gpu_free, host) + (guard.paused() ? gpu_paused : gpu_running);
        if (++calls % 64 == 0) tick(/*at_host_point=*/false, /*can_switch=*/c + 1 == step_calls);
      }
      if ((s + 1) % read_every == 0) {
        host = std::max(host, gpu_free);
        tick(/*at_host_point=*/true, /*can_switch=*/true);
      }
    }
  }
  void tick(bool at_host_point, bool can_switch) {
    guard.tick({.calls = calls, .ns = static_cast<std::uint64_t>(host), .replaying = true, .settled = true,
                .can_switch = can_switch, .at_host_point = at_host_point});
  }
};

TEST(ProcessGuard, AProgramBoundByItsGPUIsJudgedByItsGPUTime) {
  // Replay issues faster (20 ns a call against 30) but the GPU takes 50 either way: no gain.
  AsyncProgram same{ProcessGuard(options()), 30, 20, 50, 50};
  same.run(400);
  EXPECT_EQ(same.guard.state(), ProcessGuard::State::SteppedAside);
  ASSERT_TRUE(same.guard.last_ratio());
  EXPECT_NEAR(*same.guard.last_ratio(), 1.0, 0.02);
  // Replay also closes the GPU's gaps between kernels (40 ns a call against 50): kept, at the GPU's ratio.
  AsyncProgram pays{ProcessGuard(options()), 30, 20, 50, 40};
  pays.run(400);
  expect_kept_at(pays.guard, 1.25, 0.03);
}

TEST(ProcessGuard, AProgramThatWaitsForTheGPUOnlyEveryFewThousandCallsIsTimedBetweenItsSyncs) {
  // Steps of 300 calls, the loss read every 10: a host sync every 3,000 calls, longer than four
  // spans' worth (1,024). Paused spans last until a host sync once the gap between two is known.
  AsyncProgram pays{ProcessGuard(options()), 30, 20, 50, 40};
  pays.step_calls = 300;
  pays.run(400);
  EXPECT_EQ(pays.guard.sync_gap(), 3000u);
  EXPECT_FALSE(pays.guard.undecided());
  expect_kept_at(pays.guard, 1.25, 0.03);
  AsyncProgram same{ProcessGuard(options()), 30, 20, 50, 50};
  same.step_calls = 300;
  same.run(400);
  EXPECT_EQ(same.guard.state(), ProcessGuard::State::SteppedAside);
  // Only the first paused span, begun before any gap was known, went untimed.
  EXPECT_EQ(same.guard.spoiled_spans(), 1u);
}

TEST(ProcessGuard, StepsAsideWhenThePausedProgramRunsFaster) {
  Program p{ProcessGuard(options()), 100, 104};
  p.run(1000);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::SteppedAside);
  ASSERT_FALSE(p.actions.empty());
  EXPECT_EQ(p.actions.back(), GuardAction::StepAside);
  EXPECT_EQ(p.guard.paused_spans().size(), 4u);
  EXPECT_EQ(p.guard.running_spans().size(), 4u);
  ASSERT_TRUE(p.guard.last_ratio());
  EXPECT_NEAR(*p.guard.last_ratio(), 100.0 / 104.0, 0.01);
  EXPECT_NE(p.guard.summary_text().find("stepped aside for good"), std::string::npos) << p.guard.summary_text();
  // Nothing more once it stepped aside.
  EXPECT_EQ(p.guard.tick({.calls = p.calls + 10000, .ns = 1, .replaying = true, .settled = true, .can_switch = true}),
            GuardAction::None);
}

TEST(ProcessGuard, RunningThatBeatsPausedByLessThanTheMarginStepsAsideToo) {
  Program p{ProcessGuard(options()), 100, 99.5};
  p.run(1000);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::SteppedAside);
}

TEST(ProcessGuard, AClearWinIsKeptAfterTwoSpansOfEachAndJudgedAgainMuchLater) {
  Program p{ProcessGuard(options()), 120, 100};
  p.run(19);  // the first tick begins judging, then four spans of 256 calls (running ones after a tick to warm up)
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::Kept);
  EXPECT_EQ(p.guard.paused_spans().size(), 2u);
  EXPECT_EQ(p.guard.running_spans().size(), 2u);
  EXPECT_FALSE(p.guard.paused());
  ASSERT_EQ(p.actions.back(), GuardAction::Resume);  // the last span was paused: nimble run runs again
  EXPECT_NE(p.guard.summary_text().find("kept nimble run"), std::string::npos) << p.guard.summary_text();
  // Not before rejudge_calls more calls; then a new judgement begins with a paused span.
  const std::size_t actions = p.actions.size();
  p.run((1 << 14) / 64 - 1);
  EXPECT_EQ(p.actions.size(), actions);
  p.run(2);
  ASSERT_GT(p.actions.size(), actions);
  EXPECT_EQ(p.actions[actions], GuardAction::Pause);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::Judging);
}

TEST(ProcessGuard, AModestWinIsKeptOnTheMediansOfEverySpan) {
  Program p{ProcessGuard(options()), 103, 100};
  p.run(1000);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::Kept);
  EXPECT_EQ(p.guard.paused_spans().size(), 4u);
}

TEST(ProcessGuard, TheFirstIterationsReplayedAfterAPauseAreNotTimed) {
  // Replay pays 1.1x, but the first step after each resume costs 40 us more (execs updated).
  Program p{ProcessGuard(options()), 110, 100};
  p.resumed_ns = 40000;
  p.run(1000);
  expect_kept_at(p.guard, 1.1, 0.01);
}

TEST(ProcessGuard, ASpanTenTimesSlowerDoesNotMakeTheRatio) {
  // A clear win kept after two spans of each, one paused span held up 10x (H200: such spans in
  // paused and running alike; the mean of two read 8x).
  Program p{ProcessGuard(options()), 120, 100};
  p.run(1000, 64, /*pause_at=*/2, /*extra_ns=*/256 * 1200 * 9);
  ASSERT_EQ(p.guard.paused_spans().size(), 2u);
  expect_kept_at(p.guard, 1.2, 0.01);
}

TEST(ProcessGuard, APauseOfTheProgramInOneSpanDoesNotDecide) {
  // Paused is faster, but the program stops for a while (another process's turn) in a paused span.
  Program p{ProcessGuard(options()), 100, 104};
  p.run(1000, 64, /*pause_at=*/6, /*extra_ns=*/5e7);
  EXPECT_EQ(p.guard.state(), ProcessGuard::State::SteppedAside);
}

TEST(ProcessGuard, ASpanThatMetARecordingOrATrialIsNotTimed) {
  ProcessGuard guard(options());
  ASSERT_EQ(guard.tick({.calls = 0, .ns = 0, .replaying = true, .settled = true, .can_switch = true, .at_host_point = true}),
            GuardAction::Pause);
  EXPECT_EQ(guard.tick({.calls = 128, .ns = 128, .replaying = true, .settled = false, .can_switch = true}), GuardAction::None);
  EXPECT_EQ(guard.tick({.calls = 300, .ns = 300, .replaying = true, .settled = true, .can_switch = true,
                        .at_host_point = true}),
            GuardAction::Resume);
  EXPECT_TRUE(guard.paused_spans().empty());
  EXPECT_EQ(guard.spoiled_spans(), 1u);
}

TEST(ProcessGuard, TooManySpoiledSpansLeaveNimbleRunRunningUndecided) {
  ProcessGuard guard(options(2));
  std::size_t calls = 0;
  GuardAction last = GuardAction::None;
  ASSERT_EQ(guard.tick({.calls = calls, .ns = 0, .replaying = true, .settled = true, .can_switch = true,
                        .at_host_point = true}),
            GuardAction::Pause);
  for (int i = 0; i < 40 && guard.state() == ProcessGuard::State::Judging; ++i) {
    calls += 300;
    last = guard.tick({.calls = calls, .ns = calls, .replaying = true, .settled = false, .can_switch = true,
                       .at_host_point = true});
  }
  EXPECT_EQ(guard.state(), ProcessGuard::State::Kept);
  EXPECT_TRUE(guard.undecided());
  EXPECT_FALSE(guard.paused());
  EXPECT_NE(last, GuardAction::StepAside);
  EXPECT_NE(guard.summary_text().find("could not time"), std::string::npos) << guard.summary_text();
}

TEST(ProcessGuard, NoSpansMeansNoGuard) {
  ProcessGuard guard(options(0));
  EXPECT_EQ(guard.tick({.calls = 1 << 20, .ns = 1, .replaying = true, .settled = true, .can_switch = true}), GuardAction::None);
  EXPECT_EQ(guard.state(), ProcessGuard::State::Waiting);
  EXPECT_EQ(guard.summary_text(), "");
}


// The guard through the session, as the hooks drive it: iterations of three kernels, each ending
// with a host sync (a tick at a host point), a tick after each call besides. Calls cost `running_ns`
// while nimble run runs and `paused_ns` while the guard has it paused (then the hooks hand the
// session nothing).
struct GuardedProgram {
  RunOptions options;
  test::Log log;
  std::uint64_t now = 0;
  std::unique_ptr<RunSession> session;
  std::size_t calls = 0;
  bool paused = false, stepped_aside = false;
  std::vector<GuardAction> actions;
  std::vector<RecordingState> states_at_actions;
  explicit GuardedProgram(RunOptions o) : options(o) {
    session = std::make_unique<RunSession>(options, [](std::uint64_t) { return false; }, [this] { return now; });
    session->add(test::recording("step", {1, 2, 3}, log));
  }
  void act(GuardAction a) {
    if (a == GuardAction::None) return;
    actions.push_back(a);
    states_at_actions.push_back(session->recordings()[0]->state);
    paused = a == GuardAction::Pause;
    stepped_aside = stepped_aside || a == GuardAction::StepAside;
  }
  void iterations(std::size_t n, std::uint64_t running_ns, std::uint64_t paused_ns) {
    for (std::size_t i = 0; i < n && !stepped_aside; ++i) {
      for (std::uint64_t f : {1, 2, 3}) {
        ++calls;
        now += paused ? paused_ns : running_ns;
        act(session->guard_tick(calls, /*hooks_quiet=*/true, /*hooks_may_pause=*/true));
        if (!paused && !stepped_aside) test::hand_over(*session, test::sig(f), test::call_of(f));
      }
      if (!paused && !stepped_aside) session->host_synchronized();
      act(session->guard_tick(calls, /*hooks_quiet=*/true, /*hooks_may_pause=*/true, /*at_host_point=*/true));
    }
  }
};

RunOptions guarded(std::size_t trial_block) {
  RunOptions o;
  o.trial_block = trial_block;
  o.guard = {.spans = 2, .span_calls = 9, .keep_above = 1.01, .quick_keep = 1.08, .rejudge_calls = 1 << 20, .lead = 0};
  return o;
}

TEST(SessionGuard, ATrustedRecordingIsJudgedAfterFourReplayedIterationsAndStepsAsideWhenPausedIsFaster) {
  GuardedProgram p(guarded(0));  // trusted at once
  p.iterations(4, 20, 10);
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(p.session->replayed_so_far(), 4u);
  p.iterations(40, 20, 10);
  ASSERT_FALSE(p.actions.empty());
  EXPECT_EQ(p.actions.front(), GuardAction::Pause);
  EXPECT_EQ(p.actions.back(), GuardAction::StepAside);
  EXPECT_EQ(p.session->guard().state(), ProcessGuard::State::SteppedAside);
  // Finished: the next call of a recorded iteration begins nothing.
  EXPECT_EQ(test::hand_over(*p.session, test::sig(1), test::call_of(1)), Action::Run);
  EXPECT_FALSE(p.session->active());
  EXPECT_NE(p.session->summary_text().find("stepped aside for good"), std::string::npos) << p.session->summary_text();
}

TEST(SessionGuard, ReplayThatPaysIsKeptAndReplaysAfterEachPausedSpan) {
  GuardedProgram p(guarded(0));
  p.iterations(40, 10, 20);
  EXPECT_EQ(p.session->guard().state(), ProcessGuard::State::Kept);
  EXPECT_FALSE(p.paused);
  // Each resume came at a host sync: every iteration begun was replayed whole, none fell back.
  EXPECT_EQ(p.session->recordings()[0]->short_circuit->summary().fallbacks.size(), 0u);
  const std::size_t replayed = p.session->iterations_replayed();
  p.iterations(5, 10, 20);
  EXPECT_EQ(p.session->iterations_replayed(), replayed + 5);
}

TEST(SessionGuard, ARecordingOnTrialIsNotJudged) {
  GuardedProgram p(guarded(1000));  // a warm-up of 1000 replayed iterations: on trial throughout
  p.iterations(60, 20, 10);
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(p.session->recordings()[0]->state, RecordingState::Trial);
  EXPECT_GE(p.session->replayed_so_far(), 50u);
  EXPECT_EQ(p.session->guard().state(), ProcessGuard::State::Waiting);
}

// On by default (NIMBLE_RUN_GUARD=4), off with 0, and the summary says which; on, it waits for a
// trusted recording.
TEST(SessionGuard, OnByDefaultOffWithZeroAndTheSummarySaysSo) {
  EXPECT_EQ(RunOptions{}.guard.spans, 4u);
  RunOptions off = guarded(0);
  off.guard.spans = 0;
  GuardedProgram p{off};
  p.iterations(200, 20, 10);
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(guard_json(p.session->guard()).value("state", ""), "off");
  GuardedProgram on(guarded(0));
  EXPECT_EQ(guard_json(on.session->guard()).value("state", ""), "waiting");
}

TEST(SessionGuard, UnderCompareThereIsNoGuard) {
  RunOptions o = guarded(0);
  o.compare_block = 4;
  GuardedProgram p(o);
  p.iterations(60, 20, 10);
  EXPECT_TRUE(p.actions.empty());
  EXPECT_EQ(p.session->guard().state(), ProcessGuard::State::Waiting);
}

}  // namespace
}  // namespace nimble::replayer
