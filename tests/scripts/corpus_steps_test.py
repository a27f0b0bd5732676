"""CPU test of the corpus table's step counts (scripts/gpu/corpus.py steps_replayed): which steps had
replayed work, and the share of the steady state, counted from the first two such steps in a row."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu"))
from corpus import (configured, identical_text, nimble_paths, recording_states, run_summary,  # noqa: E402
                    steps_replayed)


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


class ThreadCensus(unittest.TestCase):
    """corpus_common's exit line names the threads that took the host's time (tests/programs)."""

    def test_a_busy_named_thread_shows_with_its_cpu_time(self):
        import json
        import subprocess
        programs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "programs")
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
        out = subprocess.run([sys.executable, "-c", code], cwd=programs, env=dict(os.environ, STEPS="1"),
                             capture_output=True, text=True, timeout=60).stdout
        threads = json.loads(out.split("CORPUS ", 1)[1])["threads"]
        self.assertGreaterEqual(threads["cpu_s"].get("helper-spin", 0), 0.2)
        self.assertIn("main", threads["cpu_s"])
        self.assertGreaterEqual(threads["process_cpu_s"], threads["cpu_s"]["helper-spin"])
        self.assertGreater(threads["voluntary_switches"], 0)


class IdenticalText(unittest.TestCase):
    def test_a_difference_before_any_replay_is_not_replays(self):
        # Benchmark mode: cuDNN picked other algorithms in this process; replay began at step 6.
        self.assertEqual(identical_text(False, 0, [0] * 6 + [1] * 4), "no, before replay (step 0)")
        self.assertEqual(identical_text(False, 2, [0, 0, 0, 1]), "no, before replay (step 2)")

    def test_a_difference_from_a_replayed_step_on_is_marked(self):
        self.assertEqual(identical_text(False, 3, [0, 0, 0, 1]), "**no** (step 3)")
        self.assertEqual(identical_text(False, 5, [0, 1, 1, 1, 1, 1]), "**no** (step 5)")

    def test_identical_and_unknown(self):
        self.assertEqual(identical_text(True, None, [0, 1]), "yes")
        self.assertEqual(identical_text(False, None, None), "**no**")
        self.assertEqual(identical_text(False, 4, None), "no, before replay (step 4)")  # nothing replayed



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

    def test_a_process_without_a_summary_has_no_recordings(self):
        self.assertEqual(recording_states(run_summary("/nonexistent/prog.json")), "")


if __name__ == "__main__":
    unittest.main()
