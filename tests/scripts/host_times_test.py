"""CPU test of scripts/gpu/host_times_diff.py: NIMBLE_HOST_TIMES tables of two runs compared per
function (calls, mean, milliseconds more than the first run), and each run's median step."""
import io
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "gpu"))
import host_times_diff  # noqa: E402

HEAD = ("nimble: host time inside intercepted calls (NIMBLE_HOST_TIMES; ...)\n"
        "  function                                      calls     total ms   mean us median us\n")


def log(rows, median_ms):
    return HEAD + "".join("  %-42s %9d %12.3f %9.3f %9.3f\n" % (n, c, ms, ms * 1e3 / c, 1.0) for n, c, ms in rows) + \
        'CORPUS {"median_ms": %s}\n' % median_ms


class HostTimesDiff(unittest.TestCase):
    def test_each_function_and_the_total_more_than_the_first_run(self):
        with tempfile.TemporaryDirectory() as d:
            idle, run = os.path.join(d, "idle.log"), os.path.join(d, "run.log")
            with open(idle, "w") as f:
                f.write(log([("cuLaunchKernel", 100, 1.0), ("cublasLtMatmul", 50, 2.0)], 2.9))
            with open(run, "w") as f:
                f.write(log([("cuLaunchKernel", 100, 1.5), ("cublasLtMatmul", 50, 1.5), ("cuGraphLaunch", 10, 0.25)], 3.2))
            out = io.StringIO()
            with redirect_stdout(out):
                host_times_diff.main([idle, run])
        text = out.getvalue()
        self.assertIn("| cuLaunchKernel | 100 | 10.000 | 100 | 15.000 | 0.5 |", text)
        self.assertIn("| cublasLtMatmul | 50 | 40.000 | 50 | 30.000 | -0.5 |", text)
        self.assertIn("| cuGraphLaunch | 0 |  | 10 | 25.000 | 0.2 |", text)
        self.assertIn("| **all** |", text)
        self.assertTrue(text.rstrip().endswith("median step ms: idle.log 2.900, run.log 3.200"), text)


if __name__ == "__main__":
    unittest.main()
