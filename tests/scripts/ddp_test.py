"""CPU test of scripts/gpu/ddp.py: which trace files belong to a rank, and that each is checked with
`nimble check` (a stand-in here: valid when the file says so)."""
import os
import stat
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "gpu"))
import ddp  # noqa: E402


class Traces(unittest.TestCase):
    def folder(self, names):
        d = tempfile.mkdtemp()
        for n in names:
            with open(os.path.join(d, n), "w") as f:
                f.write("valid" if "bad" not in n else "invalid")
        return d

    def test_a_ranks_recordings_and_not_its_summary_or_another_ranks(self):
        d = self.folder(["m.rank0.json", "m.rank0.2.json", "m.rank0.run.json", "m.rank1.json", "m.rank10.json",
                         "mm.rank0.json"])
        self.assertEqual([os.path.basename(p) for p in ddp.traces_of(os.path.join(d, "m.json"), 0, 2)],
                         ["m.rank0.2.json", "m.rank0.json"])
        self.assertEqual([os.path.basename(p) for p in ddp.traces_of(os.path.join(d, "m.json"), 1, 2)], ["m.rank1.json"])

    def test_one_rank_alone_writes_the_plain_names(self):
        d = self.folder(["m.json", "m.3.json", "m.run.json"])
        self.assertEqual([os.path.basename(p) for p in ddp.traces_of(os.path.join(d, "m.json"), 0, 1)],
                         ["m.3.json", "m.json"])

    def test_check_is_nimble_checks_exit_status(self):
        d = self.folder(["good.json", "bad.json"])
        fake = os.path.join(d, "nimble")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\ngrep -qx valid "$2"\n')  # nimble check FILE
        os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)
        self.assertTrue(ddp.check(fake, os.path.join(d, "good.json")))
        self.assertFalse(ddp.check(fake, os.path.join(d, "bad.json")))


if __name__ == "__main__":
    unittest.main()
