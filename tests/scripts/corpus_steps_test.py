"""CPU test of the corpus table's step counts (scripts/gpu/corpus.py steps_replayed): which steps had
replayed work, and the share of the steady state, counted from the first two such steps in a row;
and its word on results (identity), which process_pairs.py shares."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu"))
from corpus import (CORPUS, MODES, PROGRAMS, configured, identity, nimble_paths, recording_states,  # noqa: E402
                    run_summary, step_marks, steps_replayed)


class StepsReplayed(unittest.TestCase):
    def test_steady_state_begins_at_the_first_replayed_step(self):
        # Set-up detection and the recording (3 steps), then the trial's plain block (2 steps).
        r = steps_replayed([0, 0, 0, 1, 1, 0, 0, 1, 1, 1])
        self.assertEqual(r["steps_replayed"], 5)
        self.assertEqual(r["steady_steps"], 7)
        self.assertEqual(r["steady_replayed"], 5)
        self.assertAlmostEqual(r["steady_share"], 5 / 7, places=3)

    def test_a_lone_replay_during_set_up_does_not_begin_the_steady_state(self):
        # A recording of the set-up's own pattern replayed once in step 0; the loop from step 3.
        r = steps_replayed([1, 0, 0, 1, 1, 0, 1, 1])
        self.assertEqual(r["steps_replayed"], 5)
        self.assertEqual(r["steady_steps"], 5)
        self.assertAlmostEqual(r["steady_share"], 4 / 5, places=3)

    def test_an_eval_pass_of_several_iterations_is_one_replayed_step(self):
        r = steps_replayed([1, 1, 4])
        self.assertEqual(r["steps_replayed"], 3)
        self.assertEqual(r["steady_share"], 1.0)

    def test_nothing_replayed_and_nothing_known(self):
        self.assertEqual(steps_replayed([0, 0])["steady_steps"], 0)
        self.assertEqual(steps_replayed([0, 0])["steady_share"], 0.0)
        self.assertIsNone(steps_replayed(None))


class StepMarks(unittest.TestCase):
    def test_each_step_shows_replayed_partial_or_nothing(self):
        # Set-up (2 steps), a partial (segments launched, no whole iteration), replayed steps, an
        # eval pass of several iterations, then a trial's plain step.
        self.assertEqual(step_marks([0, 0, 0, 1, 1, 4, 0], [0, 0, 5, 32, 32, 44, 0]), "..sRRR.")

    def test_unknown_segments_count_as_none_and_a_plain_process_has_no_marks(self):
        self.assertEqual(step_marks([1, 0], None), "R.")
        self.assertIsNone(step_marks(None, None))


def corpus_exit_line(code, steps):
    """The CORPUS line a Python program (`code`, run beside tests/programs' corpus_common) prints at
    exit, parsed."""
    import json
    import subprocess
    programs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs")
    out = subprocess.run([sys.executable, "-c", code], cwd=programs, env=dict(os.environ, STEPS=str(steps)),
                         capture_output=True, text=True, timeout=60).stdout
    return json.loads(out.split("CORPUS ", 1)[1])


class ThreadCensus(unittest.TestCase):
    """corpus_common's exit line names the threads that took the host's time (tests/programs)."""

    def test_a_busy_named_thread_shows_with_its_cpu_time(self):
        code = ("import ctypes, threading, time, corpus_common as c\n"
                "spun = threading.Event()\n"
                "def busy():\n"
                "    ctypes.CDLL(None).prctl(15, b'helper-spin')\n"  # PR_SET_NAME
                "    end = time.thread_time() + 0.3\n"
                "    while time.thread_time() < end: pass\n"
                "    spun.set()\n"
                "    time.sleep(60)\n"  # alive at exit, so /proc lists it
                "threading.Thread(target=busy, daemon=True).start()\n"
                "spun.wait()\n"
                "c.mark_loop_start()\n"
                "c.step_done(0, 1.0)\n")
        threads = corpus_exit_line(code, steps=1)["threads"]
        self.assertGreaterEqual(threads["cpu_s"].get("helper-spin", 0), 0.2)
        self.assertIn("main", threads["cpu_s"])
        self.assertGreaterEqual(threads["process_cpu_s"], threads["cpu_s"]["helper-spin"])
        self.assertGreater(threads["voluntary_switches"], 0)


def two_steps(first, second, before=""):
    """A program of two corpus steps: `before` the loop, then each step's own lines."""
    return ("import mmap, time, corpus_common as c\n" + before +
            "c.mark_loop_start()\n" + first + "c.step_done(0, 1.0)\n" + second + "c.step_done(1, 1.0)\n")


class StepCpuTime(unittest.TestCase):
    """corpus_common's exit line gives each step's main-thread CPU time beside its wall time: a step
    that spins shows its time on the CPU, one that sleeps (waits) does not; and its page faults, and
    hardware counters where the machine has them."""

    def test_a_spinning_step_and_a_sleeping_step(self):
        spin = "end = time.thread_time() + 0.05\nwhile time.thread_time() < end: pass\n"
        line = corpus_exit_line(two_steps(spin, "time.sleep(0.05)\n"), steps=2)
        wall, cpu = line["step_ms"], line["step_cpu_ms"]
        self.assertEqual(len(cpu), 2)
        self.assertGreaterEqual(cpu[0], 45.0)
        self.assertLess(cpu[1], 20.0)
        self.assertGreaterEqual(wall[1], 45.0)

    def test_a_step_touching_new_pages_shows_their_faults(self):
        touch = "m = mmap.mmap(-1, 4096 * 512)\nfor i in range(0, 4096 * 512, 4096): m[i] = 1\n"
        faults = corpus_exit_line(two_steps("", touch), steps=2)["step_minor_faults"]
        self.assertEqual(len(faults), 2)
        self.assertGreaterEqual(faults[1], 500)
        self.assertLess(faults[0], 100)

    def test_hardware_counters_per_step_or_why_not(self):
        line = corpus_exit_line(two_steps("", "sum(range(200000))\n", before="c.COUNTERS = True\n"), steps=2)
        refused, counts = line["counters_refused"], line["step_counters"]
        self.assertEqual(set(refused) | set(counts), {"cycles", "instructions", "cache_misses", "branch_misses"})
        if "instructions" in counts:  # a machine with hardware counters (not a VM without them)
            self.assertEqual(len(counts["instructions"]), 2)
            self.assertGreater(counts["instructions"][1], counts["instructions"][0] + 1000000)
        else:
            self.assertTrue(refused["instructions"])


def trace(config, digests, segments=None, exit=0, final="f", replayed=None):
    return {"config": config, "exit": exit,
            "line": {"step_digests": digests, "final": final, "step_segments": segments, "step_replayed": replayed}}


class Identity(unittest.TestCase):
    PLAIN = trace("plain", ["a", "b", "c", "d"])

    def verdict(self, *others, mode="deterministic"):
        return identity([self.PLAIN] + list(others), mode)

    def test_the_same_digests_are_identical(self):
        self.assertEqual(self.verdict(trace("run", ["a", "b", "c", "d"], [0, 1, 1, 1])), "yes")

    def test_a_difference_after_replayed_work_began_is_nimbles(self):
        run = trace("run", ["a", "b", "x", "y"], [0, 1, 1, 1])
        for mode in ("deterministic", "benchmark"):
            self.assertEqual(self.verdict(run, mode=mode), "**no** (run from step 2; replayed work from step 1)")

    def test_segments_of_an_iteration_that_fell_back_count_as_replayed_work(self):
        # No iteration replayed whole before step 3, but segments reached the GPU in step 1.
        run = trace("run", ["a", "b", "x", "y"], segments=[0, 2, 0, 5], replayed=[0, 0, 0, 1])
        self.assertEqual(self.verdict(run, mode="benchmark"), "**no** (run from step 2; replayed work from step 1)")
        # An older build without the segment counter: whole iterations are all there is.
        old = trace("run", ["a", "b", "x", "y"], replayed=[0, 0, 0, 1])
        self.assertIn("n/a", self.verdict(old, mode="benchmark"))

    def test_before_any_replayed_work_it_is_benchmark_modes_own(self):
        run = trace("run", ["a", "x", "y", "z"], [0, 0, 1, 1])
        self.assertEqual(self.verdict(run, mode="benchmark"),
                         "n/a: run from step 1, before any replayed work (benchmark mode: plain processes differ too)")
        self.assertIn("n/a", self.verdict(run, mode="autotuned"))  # XLA's autotuning, likewise
        self.assertIn("**no**", self.verdict(run, mode="default"))
        self.assertEqual(self.verdict(run), "**no** (run from step 1; replayed work from step 2)")

    def test_plain_processes_that_differ_count_in_deterministic_mode(self):
        self.assertEqual(self.verdict(trace("plain2", ["a", "b", "c"])), "**no** (plain2 from step 3)")
        self.assertIn("n/a", self.verdict(trace("plain2", ["z"] * 4), mode="benchmark"))

    def test_after_replayed_work_nothing_can_be_said_when_two_plain_processes_differ_too(self):
        run = trace("run", ["a", "b", "x", "y"], [0, 1, 1, 1])
        plain2 = trace("plain2", ["a", "q", "r", "s"])
        self.assertEqual(self.verdict(run, plain2, mode="benchmark"),
                         "n/a: run from step 2; replayed work from step 1, and two plain processes differ too, from "
                         "step 1 (benchmark mode is not deterministic here)")
        # Plain processes that agree leave the difference nimble's; deterministic mode counts it always.
        self.assertIn("**no**", self.verdict(run, trace("plain2", ["a", "b", "c", "d"]), mode="benchmark"))
        self.assertIn("**no**", self.verdict(run, plain2))

    def test_a_final_state_that_differs_is_a_difference_after_the_last_step(self):
        self.assertEqual(self.verdict(trace("run", ["a", "b", "c", "d"], [0, 1, 1, 1], final="g")),
                         "**no** (run from step 4; replayed work from step 1)")

    def test_a_nimble_process_without_replay_counts_is_never_excused(self):
        self.assertEqual(self.verdict(trace("run", ["z"] * 4), mode="benchmark"),
                         "**no** (run from step 0; it printed no replay counts)")

    def test_an_exit_status_other_than_plains_is_no_whatever_the_digests(self):
        self.assertEqual(self.verdict(trace("run", ["a", "b", "c", "d"], [0, 1, 1, 1], exit=1)),
                         "**no** (run exited 1, plain 0)")
        self.assertEqual(self.verdict(trace("run", ["a", "b", "c", "d"], exit="timeout"), mode="benchmark"),
                         "**no** (run exited timeout, plain 0)")

    def test_a_failed_plain_process_is_no_reference(self):
        # The second pair of an ABBA run lists nimble's process first.
        run, plain = trace("run", ["a"], [1]), trace("plain", ["a"], exit=1)
        self.assertEqual(identity([run, plain], "deterministic"), "unknown: the plain process exited 1")

    def test_a_process_without_digests_is_no(self):
        self.assertEqual(self.verdict(trace("run", None)), "**no** (run printed no digests)")


class Configured(unittest.TestCase):
    """The configurations step_times.py, process_noise.py and process_pairs.py run a program in."""

    def test_plain_never_has_libnimble_preloaded(self):
        self.assertEqual(configured("plain", ["p.py"], {"LD_PRELOAD": "x.so", "A": "1"}, "t.json"), (["p.py"], {"A": "1"}))

    def test_idle_preloads_libnimble_with_no_mode(self):
        cmd, env = configured("idle", ["p.py"], {}, "t.json")
        self.assertEqual((cmd, env), (["p.py"], {"LD_PRELOAD": nimble_paths()[1]}))

    def test_run_with_settings_goes_under_nimble_run(self):
        cmd, env = configured("run:NIMBLE_RUN_TRIAL=0,X=1", ["p.py"], {}, "t.json")
        self.assertEqual(cmd, [nimble_paths()[0], "run", "-o", "t.json", "--", "p.py"])
        self.assertEqual(env, {"NIMBLE_RUN_TRIAL": "0", "X": "1"})

    def test_an_unknown_configuration_is_an_error(self):
        with self.assertRaises(SystemExit):
            configured("fast", ["p.py"], {}, "t.json")

class RecordingStates(unittest.TestCase):
    def test_each_recording_says_its_state_and_trial(self):
        summary = {"recordings": [
            {"trace": "/o/prog.json", "state": "replaying", "trial_speedup": 1.314},
            {"trace": "/o/prog.2.json", "state": "dropped", "trial_speedup": 0.97},
            {"trace": "/o/prog.3.json", "state": "trial", "undecided_because": "the program ended"}]}
        self.assertEqual(recording_states(summary),
                         "prog.json:replaying 1.31x prog.2.json:dropped 0.97x prog.3.json:trial (undecided at exit)")

    def test_the_process_guards_verdict_follows_when_it_judged(self):
        recordings = [{"trace": "/o/prog.json", "state": "replaying", "trial_speedup": 1.2}]
        self.assertEqual(recording_states({"recordings": recordings,
                                           "guard": {"state": "stepped aside", "paused_over_running": 0.9074}}),
                         "prog.json:replaying 1.20x guard:stepped-aside 0.907")
        for quiet in ("off", "waiting"):
            self.assertEqual(recording_states({"recordings": recordings, "guard": {"state": quiet}}),
                             "prog.json:replaying 1.20x")

    def test_a_process_without_a_summary_has_no_recordings(self):
        self.assertEqual(recording_states(run_summary("/nonexistent/prog.json")), "")


class CorpusPrograms(unittest.TestCase):
    def test_every_program_exists_parses_and_reports_its_steps(self):
        import ast
        for name, command, steps, _env, modes in CORPUS:
            path = os.path.join(PROGRAMS, command[0])
            with open(path) as f:
                tree = ast.parse(f.read(), path)  # a syntax error fails here, naming the file
            called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            self.assertIn("step_done", called, name + ": the table needs a digest per step")
            self.assertGreater(steps, 0, name)
            self.assertTrue(set(modes) <= set(MODES), name)


if __name__ == "__main__":
    unittest.main()
