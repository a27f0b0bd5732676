"""CPU test of scripts/gpu/process_pairs.py: the step-time statistics, the pair ratios, and two
processes taking turns through CORPUS_BATON (tests/programs/corpus_common.py)."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "gpu"))
import process_pairs  # noqa: E402

# A corpus-style program: each step sleeps 4 ms and appends its name to a shared file.
PROGRAM = """
import os, sys, time
sys.path.insert(0, %r)
import corpus_common as c
with open(os.environ["ORDER"] + ".port." + os.environ["WHO"], "w") as f:
    f.write(os.environ["MASTER_PORT"])
c.mark_loop_start()
for i in range(c.STEPS):
    time.sleep(0.004)
    with open(os.environ["ORDER"], "a") as f:
        f.write(os.environ["WHO"])
    c.step_done(i, i)
""" % os.path.join(HERE, "..", "programs")


class Statistics(unittest.TestCase):
    def test_best_window_is_the_fastest_stretch_of_the_last_half(self):
        steps = [9.0] * 100 + [2.0] * 50 + [1.0] * 50  # the last half: a slow stretch, then a fast one
        tail, best = process_pairs.tail_and_best(steps)
        self.assertEqual(tail, 1.5)
        self.assertEqual(best, 1.0)

    def test_ratios_are_plain_over_nimble_pair_by_pair(self):
        rows = [{"pair": 0, "config": "plain", "t": 2.0}, {"pair": 0, "config": "run", "t": 1.0},
                {"pair": 1, "config": "run", "t": 1.0}, {"pair": 1, "config": "plain", "t": 1.5},
                {"pair": 2, "config": "plain", "t": 1.0}, {"pair": 2, "config": "plain2", "t": 1.25}]
        self.assertEqual(process_pairs.ratios(rows, "t", "plain", "run"), [2.0, 1.5])
        self.assertEqual(process_pairs.aa_ratios(rows, "t", True), [0.8])
        self.assertEqual(process_pairs.aa_ratios(rows, "t", False), [0.75, 1.0 / 1.5])

    def test_turn_ratios_pair_each_turn_of_the_last_half_with_the_same_turn_of_the_other(self):
        # 8 steps in turns of 2: the last half is turns 2 and 3. A slow stretch (5 ms) falls on
        # both processes' turn 3: each turn alone still reads plain twice as slow as nimble.
        plain = [9.0, 9.0, 9.0, 9.0, 2.0, 2.0, 10.0, 10.0]
        run = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 5.0, 5.0]
        self.assertEqual(process_pairs.turn_ratios(plain, run, 2), [2.0, 2.0])
        # A shorter process: only whole turns both ran count; the half is of the shorter one.
        self.assertEqual(process_pairs.turn_ratios(plain[:7], run, 2), [2.0])

    def test_turn_ratios_pool_every_pair_that_holds_both_configs(self):
        steps = {(0, "plain"): [1.0] * 4, (0, "run"): [0.5] * 4,   # 2x, two turns
                 (1, "run"): [1.0] * 4, (1, "plain"): [1.0] * 4,   # 1x, two turns
                 (2, "plain"): [3.0] * 4, (2, "idle"): [1.0] * 4}  # no run: not pooled
        pooled = process_pairs.pooled_turn_ratios(steps, "plain", "run", 1)
        self.assertEqual(sorted(pooled), [1.0, 1.0, 2.0, 2.0])
        self.assertEqual(process_pairs.fmt_pooled(pooled), "1.500 (4 turns)")
        self.assertEqual(process_pairs.fmt_pooled([]), "")


class SteadyState(unittest.TestCase):
    def test_the_nimble_processes_steady_steps_add_up(self):
        rows = [{"config": "plain", "steady_steps": "", "steady_replayed": ""},
                {"config": "run", "steady_steps": 100, "steady_replayed": 95},
                {"config": "run", "steady_steps": 50, "steady_replayed": 40},
                {"config": "plain2", "steady_steps": "", "steady_replayed": ""}]
        self.assertEqual(process_pairs.steady_text(rows), "90% (135/150)")

    def test_nothing_replayed_says_nothing(self):
        self.assertEqual(process_pairs.steady_text([{"config": "run", "steady_steps": 0, "steady_replayed": 0}]), "")


class Interleaved(unittest.TestCase):
    def run_pair(self, steps_a, steps_b, turn=process_pairs.TURN):
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "prog.py"), "w") as f:
            f.write(PROGRAM)
        order = os.path.join(d, "order")
        process_pairs.PROGRAMS = d
        env = dict(os.environ, ORDER=order)
        cmds = [([sys.executable, "prog.py"], dict(env, WHO="A", STEPS=str(steps_a))),
                ([sys.executable, "prog.py"], dict(env, WHO="B", STEPS=str(steps_b)))]
        results = process_pairs.side_by_side(cmds, d, ["a", "b"], 60, turn)
        with open(order) as f:
            return results, f.read()

    def test_two_processes_take_turns_and_the_wait_is_no_step_time(self):
        turn = process_pairs.TURN
        results, order = self.run_pair(3 * turn, 3 * turn)
        self.assertEqual(order, ("A" * turn + "B" * turn) * 3)
        for out, code, _ in results:
            self.assertEqual(code, 0, out)
            line = json.loads(next(l for l in out.splitlines() if l.startswith("CORPUS "))[len("CORPUS "):])
            self.assertEqual(line["steps"], 3 * turn)
            # A turn of the other process is 20 steps of 4 ms: no step but the first holds one.
            self.assertLess(max(line["step_ms"][1:]), 60.0, line["step_ms"])

    def test_the_two_processes_have_their_own_rendezvous_ports(self):  # a one-rank DDP program
        self.run_pair(2, 2)
        order = os.path.join(process_pairs.PROGRAMS, "order")
        ports = [open(order + ".port." + who).read() for who in "AB"]
        self.assertNotEqual(ports[0], ports[1])

    def test_turns_of_another_length(self):  # --turn: HF generate's 80 ms steps take turns of 2
        results, order = self.run_pair(6, 6, turn=2)
        self.assertEqual([code for _, code, _ in results], [0, 0])
        self.assertEqual(order, "AABB" * 3)

    def test_a_process_that_ends_first_does_not_hold_the_other(self):
        turn = process_pairs.TURN
        results, order = self.run_pair(turn + 5, 3 * turn)
        self.assertEqual([code for _, code, _ in results], [0, 0])
        self.assertEqual(order.count("A"), turn + 5)
        self.assertEqual(order.count("B"), 3 * turn)
        self.assertTrue(order.endswith("B" * (2 * turn)), order)


if __name__ == "__main__":
    unittest.main()
