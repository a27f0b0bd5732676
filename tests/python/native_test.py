"""nimble's ctypes binding (python/nimble/_native.py) against the fake driver, without PyTorch:
runs in CI. argv: path of libnimble_graph.so, path of the fake libcuda."""
import os
import subprocess
import sys

lib, fake = sys.argv[1], sys.argv[2]
os.environ.update(NIMBLE_GRAPH_LIB=lib, NIMBLE_LIBCUDA=fake, FAKE_DRIVER_GRAPHS="1")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import nimble
from nimble._native import Session

failures = []


def expect_error(fn, needle, what):
    try:
        fn()
    except nimble.NimbleError as e:
        ok = needle in str(e)
        print(("ok   " if ok else "FAIL ") + f"{what}: {e}")
        if not ok:
            failures.append(what)
        return
    print(f"FAIL {what}: no error")
    failures.append(what)


s = Session()
expect_error(lambda: s.rewire(0x1234, "fastest"), "unknown wiring 'fastest'", "an unknown wiring is refused")
expect_error(lambda: s.rewire(0x1234, "schedule:0"), "schedule:K", "a schedule on no streams is refused")
expect_error(lambda: s.mark(0x10, [(0x7f0000000000, 64, True)]), "not being captured",
             "a mark outside a capture is refused")
s.close()
s.close()  # twice is harmless

# No library where NIMBLE_GRAPH_LIB points: the error says how to build it.
code = ("import sys; sys.path.insert(0, %r); import nimble._native as n\n"
        "try:\n    n.Session()\nexcept n.NimbleError as e:\n    print(e); sys.exit(3)\n") % os.path.join(
            os.path.dirname(__file__), "..", "..", "python")
env = dict(os.environ, NIMBLE_GRAPH_LIB="/nonexistent/libnimble_graph.so")
r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
ok = r.returncode == 3 and "cmake --build build --target nimble_graph" in r.stdout
print(("ok   " if ok else "FAIL ") + "a missing library names the build command: " + r.stdout.strip())
if not ok:
    failures.append("missing library")

# nimble.torch is only imported when asked for (CI has no PyTorch).
print("ok   import nimble does not import torch" if "torch" not in sys.modules else "FAIL torch imported")
if "torch" in sys.modules:
    failures.append("lazy torch")
sys.exit(1 if failures else 0)
