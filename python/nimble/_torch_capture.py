"""Capturing PyTorch work as a CUDA graph that nimble can rewire.

PyTorch captures (torch.cuda.graph, keep_graph=True) and keeps what it is good at: the private
memory pool, the RNG state of every replay, instantiation and launch. While it captures, a
TorchDispatchMode tells nimble which operation issued each node and which tensor storages that
operation reads and writes (its schema says which arguments it mutates). nimble then replaces the
captured chain by the dependencies those extents imply (libnimble_graph.so), and the graph is
instantiated and replayed by PyTorch as usual.
"""
import contextlib
import os
import statistics
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from ._native import NimbleError, Session

_DEBUG = os.environ.get("NIMBLE_GRAPH_DEBUG", "0") not in ("", "0")


def _storage_extent(t):
    if not isinstance(t, torch.Tensor) or t.device.type != "cuda" or t.layout != torch.strided:
        return None
    try:
        storage = t.untyped_storage()
    except Exception:  # tensor subclasses without storage
        return None
    if storage.nbytes() == 0:
        return None
    return storage.data_ptr(), storage.nbytes()


def _operation_extents(func, args, kwargs, out):
    """(address, size, written) of every CUDA storage an operation reads or writes."""
    extents = []
    schema = getattr(func, "_schema", None)
    if schema is None:  # no schema: everything it sees may be written
        for t in tree_flatten((args, kwargs, out))[0]:
            e = _storage_extent(t)
            if e:
                extents.append((e[0], e[1], True))
        return extents
    for i, a in enumerate(schema.arguments):
        if i < len(args):
            value = args[i]
        elif a.name in kwargs:
            value = kwargs[a.name]
        else:
            continue
        written = a.alias_info is not None and a.alias_info.is_write
        for t in tree_flatten(value)[0]:
            e = _storage_extent(t)
            if e:
                extents.append((e[0], e[1], written))
    for t in tree_flatten(out)[0]:
        e = _storage_extent(t)
        if e:
            extents.append((e[0], e[1], True))
    return extents


class _OperationMarks(TorchDispatchMode):
    """Marks every operation's nodes during a capture.

    Memory reuse inside the graph would order independent work (a conflict on reused memory is
    a real one). So every result is kept alive until the capture ends, and with `isolate` every
    operation allocates from a memory pool of its own: its temporaries (cuDNN workspaces,
    layout conversions, split-K buffers), which nimble only sees as whole driver allocations,
    then share those allocations with nothing else. This renames memory as `nimble bench` does,
    at the cost of a few MB per operation."""

    def __init__(self, session, isolate):
        super().__init__()
        self.session = session
        self.isolate = isolate
        self.pools = []
        self.kept = []
        self.error = None
        self.operations = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.error is not None:
            return func(*args, **kwargs)
        stream = torch.cuda.current_stream().cuda_stream
        try:
            self.session.mark(stream, [])  # whatever came before: unknown origin
        except NimbleError as e:
            self.error = f"before {func}: {e}"
        if self.isolate:
            pool = torch.cuda.MemPool()
            self.pools.append(pool)
            with torch.cuda.use_mem_pool(pool):
                out = func(*args, **kwargs)
        else:
            out = func(*args, **kwargs)
        if self.error is None:
            try:
                extents = _operation_extents(func, args, kwargs, out)
                self.session.mark(stream, extents)
                if extents:
                    self.operations += 1
                    if _DEBUG:
                        print(f"nimble-graph: operation {self.operations} is {func}", file=sys.stderr)
            except NimbleError as e:
                self.error = f"after {func}: {e}"
        self.kept.append(out)
        return out


class Captured:
    """A captured graph, its rewiring and how fast each wiring replayed."""

    def __init__(self, graph, session, marks):
        self.graph = graph
        self.session = session
        self.operations = marks.operations
        self.wiring = "chain"
        self.report = {}
        self.timings_ms = {}
        self.rejected = {}

    def rewire(self, wiring):
        self.report = self.session.rewire(self.graph.raw_cuda_graph(), wiring)
        self.graph.instantiate()
        self.wiring = wiring


def capture(fn, *, pool=None, stream=None, session=None, isolate=True, plain=False):
    """Runs fn() under capture; returns (Captured, fn's result). Raises NimbleError when nimble
    could not follow the capture (the caller falls back to PyTorch's own graph). plain: no marks
    at all, exactly PyTorch's own graph (only the "chain" wiring makes sense for it)."""
    session = session or Session()
    graph = torch.cuda.CUDAGraph(keep_graph=True)
    marks = _OperationMarks(session, isolate)
    with torch.cuda.graph(graph, pool=pool, stream=stream):
        with contextlib.nullcontext() if plain else marks:
            result = fn()
    marks.kept.clear()
    if marks.error is not None:
        graph.instantiate()
        raise NimbleError(f"nimble could not follow the capture ({marks.error}); "
                          "PyTorch's own graph is used")
    captured = Captured(graph, session, marks)
    captured.pools = marks.pools  # memory the graph uses: lives as long as the graph
    return captured, result


def time_replays(graph, replays=20, warmup=3):
    """Median milliseconds of one replay."""
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def choose_wiring(captured, outputs, wirings, replays=20):
    """Rewires `captured` each way in `wirings` (after "chain", the captured order, which is the
    reference), keeps those whose outputs equal the reference bit for bit, and settles on the
    fastest (its report stays in captured.report). `outputs`: the tensors the graph writes."""
    captured.rewire("chain")
    captured.graph.replay()
    torch.cuda.synchronize()
    reference = [o.clone() for o in outputs]
    captured.timings_ms["chain"] = time_replays(captured.graph, replays)
    for w in wirings:
        if w == "chain":
            continue
        captured.rewire(w)
        for o in outputs:
            o.zero_()
        captured.graph.replay()
        torch.cuda.synchronize()
        if not all(torch.equal(a, b) for a, b in zip(outputs, reference)):
            captured.rejected[w] = "outputs differ from the captured order's"
            continue
        captured.timings_ms[w] = time_replays(captured.graph, replays)
    best = min(captured.timings_ms, key=captured.timings_ms.get)
    if best != captured.wiring:
        captured.rewire(best)
