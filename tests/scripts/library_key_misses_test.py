"""CPU test of scripts/gpu/library_key_misses.py: library calls whose key repeats while the
kernels they launch differ are reported with the first differing word and where the pointers moved."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu"))
from library_key_misses import key_misses  # noqa: E402


def launch(call_id, key, pointer, alloc, symbol="cudnnBackendExecute", name="gemmk1_kernel"):
    raw = (7).to_bytes(8, "little") + pointer.to_bytes(8, "little")
    return {"kind": "kernel", "name": name, "library_call": symbol, "library_call_id": call_id,
            "library_key": key, "args": {"bytes": raw.hex(), "params": [{"offset": 0, "size": 16}],
                                         "pointers": [{"offset": 8, "alloc": alloc, "alloc_offset": 0}]}}


class KeyMisses(unittest.TestCase):
    def test_the_same_key_launching_the_same_bytes_is_no_miss(self):
        tasks = [launch(1, "0xa", 0x7000, 3), launch(2, "0xb", 0x9000, 4), launch(3, "0xa", 0x7000, 3)]
        calls, repeated, misses = key_misses(tasks)
        self.assertEqual((calls, repeated, misses), (3, 1, []))

    def test_the_same_key_launching_another_pointer_is_a_miss_naming_the_word_and_allocations(self):
        tasks = [launch(1, "0xa", 0x7000, 3), {"kind": "sync", "id": 9}, launch(2, "0xa", 0x7100, 5)]
        calls, repeated, misses = key_misses(tasks)
        self.assertEqual((calls, repeated, len(misses)), (2, 1, 1))
        symbol, key, earlier, later, diff = misses[0]
        self.assertEqual((symbol, key, earlier, later), ("cudnnBackendExecute", "0xa", 1, 2))
        self.assertIn("byte 9 (parameter at 0, 16 bytes): word@8 0000000000007000 then 0000000000007100", diff)
        self.assertIn("arg@8: alloc (3, 0) then (5, 0)", diff)

    def test_the_differing_word_is_placed_among_the_traces_allocations(self):
        tasks = [launch(1, "0xa", 0x7000, 3), launch(2, "0xa", 0x9010, 5)]
        allocations = [{"id": 3, "addr": "0x7000", "size": 256, "kind": "device"}]
        diff = key_misses(tasks, allocations)[2][0][4]
        self.assertIn("[allocation 3 (device) + 0; then in no allocation the trace holds]", diff)

    def test_calls_of_one_key_with_different_launch_counts_are_a_miss(self):
        tasks = [launch(1, "0xa", 0x7000, 3), launch(1, "0xa", 0x7000, 3), launch(2, "0xa", 0x7000, 3)]
        misses = key_misses(tasks)[2]
        self.assertEqual(misses[0][4], "2 launches then 1")

    def test_calls_without_a_key_are_left_out(self):
        tasks = [launch(1, None, 0x7000, 3), launch(2, None, 0x7100, 3)]
        self.assertEqual(key_misses(tasks), (0, 0, []))


if __name__ == "__main__":
    unittest.main()
