"""CPU test of scripts/gpu/moving_args.py: how a trace of several steps is split into steps, and
which argument words and copy addresses it reports as changed, coming back or new."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu"))
from moving_args import split_steps, step_changes  # noqa: E402


def kernel(name, pointer, scalar=1):
    raw = pointer.to_bytes(8, "little") + scalar.to_bytes(8, "little")
    return {"kind": "kernel", "name": name, "args": {"bytes": raw.hex(), "pointers": [{"offset": 0}]}}


def copy(src, dst, size=64):
    return {"kind": "memcpy", "api": "cuMemcpyHtoDAsync_v2", "copy": {"src": hex(src), "dst": hex(dst), "bytes": size}}


def steps_of(count, step):
    """`count` steps, step(i) giving step i's calls."""
    return [t for i in range(count) for t in step(i)]


class SplitSteps(unittest.TestCase):
    def test_finds_the_most_steps_that_repeat_the_same_calls(self):
        tasks = steps_of(4, lambda i: [kernel("a", 0x1000), copy(0x10, 0x2000), kernel("b", 0x3000)])
        self.assertEqual(split_steps(tasks), (4, 3))
        self.assertEqual(split_steps(tasks, 2), (2, 6))

    def test_steps_that_issue_other_work_do_not_split(self):
        tasks = [kernel("a", 1), kernel("b", 1), kernel("a", 1), kernel("c", 1)]
        self.assertIsNone(split_steps(tasks))
        self.assertIsNone(split_steps(tasks, 3))  # 4 calls are not 3 steps


class StepChanges(unittest.TestCase):
    def test_a_buffer_alternating_between_two_places_comes_back_after_two_steps(self):
        tasks = steps_of(4, lambda i: [kernel("a", 0x1000 + 0x100 * (i % 2)), kernel("b", 0x5000)])
        c = step_changes(tasks, 4, 2)
        self.assertEqual([c["moved"][s] for s in (1, 2, 3)], [1, 1, 1])  # only "a" moves
        self.assertEqual(c["by_kind"][(True, "back after 2")], 2)     # steps 2 and 3
        self.assertEqual(c["by_kind"][(True, "new")], 1)              # step 1: nothing before to return to
        self.assertEqual(c["names"], {"a": 3})

    def test_a_copy_source_moving_every_step_is_new_each_time_and_other_words_are_told_apart(self):
        tasks = steps_of(3, lambda i: [copy(0x10 + i, 0x2000), kernel("k", 0x3000, scalar=i)])
        c = step_changes(tasks, 3, 2, most_examples=1)
        self.assertEqual(c["by_kind"][(True, "new")], 2)    # the copy's source, steps 1 and 2
        self.assertEqual(c["by_kind"][(False, "new")], 2)   # the kernel's scalar
        self.assertEqual(len(c["examples"]), 1)
        self.assertIn("src@0: 0x10 -> 0x11", c["examples"][0])

    def test_identical_steps_change_nothing(self):
        tasks = steps_of(3, lambda i: [kernel("a", 0x1000), copy(0x10, 0x2000)])
        c = step_changes(tasks, 3, 2)
        self.assertEqual(sum(c["moved"].values()), 0)
        self.assertEqual(c["examples"], [])


if __name__ == "__main__":
    unittest.main()
