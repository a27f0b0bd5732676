"""Shared by the corpus programs: the step count, a per-step digest of results, step times.

Each program is written as people write their scripts (no nimble markers). It calls
`step_done(i, *results)` after every step: the results' bytes are hashed (a copy to the host,
like the `loss.item()` every script has), the step's wall time is kept. At exit it prints one
line `CORPUS {json}` with the digest over all steps, the per-step digests and the median step
time of the steady steps, which scripts/gpu/corpus.py compares between a plain run and a run
under `nimble run`. Under nimble run it also asks libnimble.so, after each step, how many iterations
it has replayed (`nimble_run_iterations_replayed`), so the table can say which steps were replayed,
and how many segments of recorded work it has launched (`nimble_run_segments_launched`: the first
step that had any, partial iterations included, is where nimble could first have changed a result).
"""
import atexit
import hashlib
import json
import os
import resource
import time

STEPS = int(os.environ.get("STEPS", "60"))
# "A:B" brackets steps A..B-1 with cuProfilerStart/Stop, so `nimble record` (its default capture
# range) records exactly those steps, for looking at what a program issues per step.
PROFILE_STEPS = os.environ.get("CORPUS_PROFILE_STEPS", "")
# CORPUS_DEVICE_SYNC=1: torch.cuda.synchronize() after every step (a context-wide sync, which must
# never meet a graph capture of nimble's thread).
DEVICE_SYNC = os.environ.get("CORPUS_DEVICE_SYNC", "") == "1"
MODE = os.environ.get("CORPUS_MODE", "deterministic")  # or "benchmark"
# CORPUS_BATON="MINE,PEER,FIRST,K" (scripts/gpu/process_pairs.py --interleaved): two processes take
# turns of K steps, passing a byte through two FIFOs, so both meet the same host contention; the
# time spent waiting for the turn is not counted in any step.
BATON = os.environ.get("CORPUS_BATON", "")
# CORPUS_COUNTERS=1: the main thread's hardware counters per step (thread_counters.py), in step_counters
COUNTERS = os.environ.get("CORPUS_COUNTERS", "") == "1"
# CORPUS_BLOCKING_SYNC=1: the primary context waits for the GPU asleep, not spinning (set before torch
# makes it), so a step's CPU time is host work only and its wall time above that is the GPU's.
if os.environ.get("CORPUS_BLOCKING_SYNC", "") == "1":
    import ctypes
    _cuda = ctypes.CDLL("libcuda.so.1")
    if _cuda.cuInit(0) or _cuda.cuDevicePrimaryCtxSetFlags(0, 0x4):  # CU_CTX_SCHED_BLOCKING_SYNC
        raise SystemExit("CORPUS_BLOCKING_SYNC: the primary context's flags could not be set")

_digests = []
_times = []
_last = [None]
_final = [None]
_loop_start = [None]  # time.monotonic() when the loop began


class _Deltas:
    """What counters (`read()`: a dict of running totals) added during each step; restart() leaves
    out what came since the last step (set-up, the peer's turn)."""

    def __init__(self, read):
        self.read, self.steps, self.last = read, {}, None

    def restart(self):
        self.last = self.read()

    def step_done(self):
        now = self.read()
        if self.last is not None:
            for name, value in now.items():
                self.steps.setdefault(name, []).append(value - self.last[name])
        self.last = now


def _thread_usage():
    """The main thread's CPU ms and minor page faults so far. CPU time from the thread's clock: the
    rusage times tick in jiffies (4 ms on the GPU machine)."""
    return {"cpu_ms": time.thread_time() * 1e3, "minor_faults": resource.getrusage(resource.RUSAGE_THREAD).ru_minflt}


_usage = _Deltas(_thread_usage)
_counters = None  # with CORPUS_COUNTERS: thread_counters.ThreadCounters, from the loop's start
_counts = None    # and its _Deltas


class _Baton:
    def __init__(self, spec):
        mine, peer, first, k = spec.split(",")
        self.k, self.held, self.steps = int(k), first == "1", 0
        self.mine, self.peer = os.open(mine, os.O_RDWR), os.open(peer, os.O_RDWR)  # O_RDWR: open never blocks
        self.mine_done, self.peer_done = mine + ".done", peer + ".done"

    def take(self):
        """Waits for the turn, unless the peer has ended (it passes a last byte as it ends)."""
        import select
        if not self.held and not os.path.exists(self.peer_done):
            if select.select([self.mine], [], [], 300)[0]:
                os.read(self.mine, 1)
        self.held = True

    def step(self):
        """After each step: every K steps the turn goes to the peer and comes back (True then)."""
        self.steps += 1
        if self.steps % self.k:
            return False
        self.held = False
        os.write(self.peer, b"t")
        self.take()
        return True

    def end(self):
        open(self.mine_done, "w").close()
        os.write(self.peer, b"e")


_baton = _Baton(BATON) if BATON else None


class _PerStep(_Deltas):
    """What one of libnimble.so's counters added during each step, counted from the process's start
    (never restarted); per_step() is None when libnimble.so is not preloaded."""

    def __init__(self, name):
        try:
            import ctypes
            counter = getattr(ctypes.CDLL(None), name)
            counter.restype = ctypes.c_ulonglong
        except (OSError, AttributeError):
            counter = None
        super().__init__(lambda: {name: counter()})
        self._name, self._counter, self.last = name, counter, {name: 0}

    def step_done(self):
        if self._counter is not None:
            super().step_done()

    def per_step(self):
        return self.steps.get(self._name, []) if self._counter is not None else None


_replayed = _PerStep("nimble_run_iterations_replayed")  # iterations nimble run replayed whole
_segments = _PerStep("nimble_run_segments_launched")    # segments of recorded work it launched
_inside = _PerStep("nimble_host_ns_inside")  # host ns inside nimble's wrappers (NIMBLE_HOST_TIMES=1)


def torch_setup():
    """Deterministic mode: cudnn.benchmark off and deterministic algorithms; benchmark mode: on."""
    import torch
    torch.manual_seed(0)
    if MODE == "benchmark":
        torch.backends.cudnn.benchmark = True
    else:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True)
    return torch


def _bytes(x):
    if hasattr(x, "detach"):  # torch
        return x.detach().float().cpu().numpy().tobytes()
    if hasattr(x, "get"):  # cupy
        return x.get().tobytes()
    try:
        import numpy as np
        return np.asarray(x).tobytes()
    except Exception:  # plain python numbers
        return repr(x).encode()


def _profiler(call):
    import ctypes
    getattr(ctypes.CDLL("libcuda.so.1"), call)()


def step_begins(i):
    """Called before step i's work by the programs that support CORPUS_PROFILE_STEPS."""
    if PROFILE_STEPS and i == int(PROFILE_STEPS.split(":")[0]):
        _profiler("cuProfilerStart")


def step_done(i, *results):
    if PROFILE_STEPS and i + 1 == int(PROFILE_STEPS.split(":")[1]):
        _profiler("cuProfilerStop")
    if DEVICE_SYNC:  # as benchmarking loops do: cudaDeviceSynchronize, which no capture may meet
        import torch
        torch.cuda.synchronize()
    h = hashlib.sha256()
    for r in results:
        h.update(_bytes(r))
    _digests.append(h.hexdigest()[:16])
    _replayed.step_done()  # after the digest: the step's last copy to the host has run
    _segments.step_done()
    _inside.step_done()
    now = time.perf_counter()
    if _last[0] is not None:
        _times.append((now - _last[0]) * 1e3)
    _last[0] = now
    for deltas in (_usage, _counts):
        if deltas is not None:
            deltas.step_done()
    if _baton is not None and _baton.step():
        _restart()  # the peer's turn is not this step's time


def final_state(*tensors):
    """The digest of what the run leaves (final weights), printed with the steps' as "final"."""
    h = hashlib.sha256()
    for t in tensors:
        h.update(_bytes(t))
    _final[0] = h.hexdigest()[:16]


def _restart():
    """Step times and counts begin again from now."""
    _last[0] = time.perf_counter()
    for deltas in (_usage, _counts):
        if deltas is not None:
            deltas.restart()


def mark_loop_start():
    """Set-up is over: step times count from here."""
    if _baton is not None:
        _baton.take()
    global _counters, _counts
    if COUNTERS and _counters is None:
        import thread_counters
        _counters = thread_counters.ThreadCounters()
        _counts = _Deltas(_counters.read)
    _restart()
    _loop_start[0] = time.monotonic()  # nimble's debug lines carry this clock


def _threads():
    """CPU seconds of the process (ended threads included) and of its live threads at exit, summed
    by thread name, largest first (a helper thread of nimble's or the driver's competing with the
    program shows here), with the context switches."""
    tick = os.sysconf("SC_CLK_TCK")
    by_name = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/stat" % tid) as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        name = "main" if int(tid) == os.getpid() else stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        by_name[name] = by_name.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"process_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),  # ended threads too
            "cpu_s": dict(sorted(((k, round(v, 2)) for k, v in by_name.items()), key=lambda kv: -kv[1])),
            "voluntary_switches": usage.ru_nvcsw, "involuntary_switches": usage.ru_nivcsw}


@atexit.register
def _report():
    if _baton is not None:
        _baton.end()
    steady = sorted(_times[len(_times) // 4:]) or [0.0]
    # The last half: after nimble run has found, recorded and tried the iteration.
    tail = sorted(_times[len(_times) // 2:]) or [0.0]
    total = hashlib.sha256("".join(_digests).encode()).hexdigest()[:16]
    print("CORPUS " + json.dumps({"digest": total, "steps": len(_digests), "step_digests": _digests,
                                  "final": _final[0], "rank": int(os.environ.get("RANK", "0")),
                                  "median_ms": steady[len(steady) // 2], "tail_ms": tail[len(tail) // 2], "mode": MODE,
                                  "step_ms": [round(t, 4) for t in _times], "loop_start_monotonic_s": _loop_start[0],
                                  # The main thread's CPU time in each step: wall time above it is waiting
                                  # (for the GPU, or for the vCPU another thread or process holds).
                                  "step_cpu_ms": [round(t, 4) for t in _usage.steps.get("cpu_ms", [])],
                                  "step_minor_faults": _usage.steps.get("minor_faults", []),
                                  "step_counters": _counts.steps if _counts else {},
                                  "step_inside_nimble_ms": [n / 1e6 for n in _inside.per_step() or []],
                                  "counters_refused": _counters.refused if _counters else None,
                                  "step_replayed": _replayed.per_step(), "step_segments": _segments.per_step(),
                                  "threads": _threads()}), flush=True)
