"""Capturing PyTorch work as a CUDA graph that nimble can rewire.

PyTorch captures (torch.cuda.graph, keep_graph=True) and keeps what it is good at: the private
memory pool, the RNG state of every replay, instantiation and launch. While it captures, a
TorchDispatchMode tells nimble which operation issued each node and which tensor storages that
operation reads and writes (its schema says which arguments it mutates). nimble then replaces the
captured chain by the dependencies those extents imply (libnimble_graph.so), and the graph is
instantiated and replayed by PyTorch as usual.
"""
import contextlib
import gc
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


_UNMARKED_WRITES = ("running_mean", "running_var")


def _operation_tensors(func, args, kwargs, out):
    """(tensor, written, result) for everything an operation sees: its arguments, written where
    its schema says it mutates them (all of them when it has no schema), and its results."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        for t in tree_flatten((args, kwargs))[0]:
            yield t, True, False
    else:
        for i, a in enumerate(schema.arguments):
            if i < len(args):
                value = args[i]
            elif a.name in kwargs:
                value = kwargs[a.name]
            else:
                continue
            # cudnn_batch_norm and friends update running statistics their schema does not mark
            # (their backward passes only read them).
            written = (a.alias_info is not None and a.alias_info.is_write) or (
                a.name in _UNMARKED_WRITES and "backward" not in schema.name)
            for t in tree_flatten(value)[0]:
                yield t, written, False
    for t in tree_flatten(out)[0]:
        yield t, True, True


def _operation_extents(func, args, kwargs, out):
    """(address, size, written) of every CUDA storage an operation reads or writes."""
    extents = []
    for t, written, _ in _operation_tensors(func, args, kwargs, out):
        e = _storage_extent(t)
        if e:
            extents.append((e[0], e[1], written))
    return extents


def require_native_allocator(what):
    """nimble.torch captures with PyTorch's native caching allocator only. Under its
    cudaMallocAsync backend the per-operation pools do not exist ("does not yet support
    createOrIncrefPool"), and without them a rewired capture ended with a failed free that
    aborted the process (H100, 2026-11-25): refused before anything is captured."""
    if torch.cuda.memory.get_allocator_backend() == "cudaMallocAsync":
        raise NimbleError(f"{what}: nimble.torch needs PyTorch's native caching allocator, and "
                          "PYTORCH_CUDA_ALLOC_CONF selects backend:cudaMallocAsync; unset it for this program "
                          "(nimble run and nimble bench work with either)")


class _OperationMarks(TorchDispatchMode):
    """Marks every operation's nodes during a capture.

    Memory reuse inside the graph would order independent work (a conflict on reused memory is
    a real one). So every result is kept alive until the capture ends, and with `isolate` every
    operation allocates from a memory pool of its own: its temporaries (cuDNN workspaces,
    layout conversions, split-K buffers), which nimble only sees as whole driver allocations,
    then share those allocations with nothing else. This renames memory as `nimble bench` does,
    at the cost of a few MB per operation. Pools stop once the memory PyTorch reserves reaches
    `isolate_until` bytes: later operations share the graph's pool (reused memory orders them,
    which is slower but right), and `shared_operations` counts them. Running out of memory
    during a capture is not an option: PyTorch's allocator cannot free cached memory then and
    aborts the process."""

    def __init__(self, session, isolate, isolate_until=0):
        super().__init__()
        self.session = session
        self.isolate = isolate
        self.isolate_until = isolate_until
        self.shared_operations = 0
        self.pools = []
        self.kept = []
        self.error = None
        self.operations = 0
        self.created = set()  # storages made during the capture (the graph's own memory)
        self.state = {}       # storages from before it that the graph uses: address -> (storage, element size)

    def _note_state(self, func, args, kwargs, out):
        # Read or written: a schema that forgets a write must not leave state unsaved. A result on
        # an argument's storage (an in-place op returns its argument) is no new memory.
        arguments, results = {}, []
        for t, _, result in _operation_tensors(func, args, kwargs, out):
            e = _storage_extent(t)
            if e is None:
                continue
            if result:
                results.append(e[0])
            else:
                arguments.setdefault(e[0], (t.untyped_storage(), t.element_size()))
        self.created.update(r for r in results if r not in arguments)
        for address, seen in arguments.items():
            if address not in self.created:
                self.state.setdefault(address, seen)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.error is not None:
            return func(*args, **kwargs)
        stream = torch.cuda.current_stream().cuda_stream
        try:
            self.session.mark(stream, [])  # whatever came before: unknown origin
        except NimbleError as e:
            self.error = f"before {func}: {e}"
        isolate = self.isolate and torch.cuda.memory_reserved() < self.isolate_until  # host-side count
        self.shared_operations += self.isolate and not isolate
        if isolate:
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
                self._note_state(func, args, kwargs, out)
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
        self.shared_operations = marks.shared_operations  # operations past the isolation budget
        # Memory from before the capture that the graph uses (weights, optimizer state, batch-norm
        # statistics, inputs): what a training step carries between replays, and more.
        self.state = list(marks.state.values())  # (storage, element size)
        self.reference = None  # the captured order's outputs and state after one replay (while choosing)
        self.unchecked_bytes = 0
        self.wiring = "chain"
        self.report = {}
        self.timings_ms = {}
        self.rejected = {}

    def rewire(self, wiring):
        if self.report and wiring == self.wiring:
            return  # already wired so and instantiated (capture_step asks for "chain" twice)
        self.report = self.session.rewire(self.graph.raw_cuda_graph(), wiring)
        self.graph.instantiate()
        self.wiring = wiring


def capture(fn, *, pool=None, stream=None, session=None, isolate=True, plain=False):
    """Runs fn() under capture; returns (Captured, fn's result). Raises NimbleError when nimble
    could not follow the capture (the caller falls back to PyTorch's own graph). plain: no marks
    at all, exactly PyTorch's own graph (only the "chain" wiring makes sense for it)."""
    session = session or Session()
    graph = torch.cuda.CUDAGraph(keep_graph=True)
    isolate_until = 0
    if isolate and not plain:
        # Pools of an earlier capture that was let go only return to the device here: the
        # allocator cannot free them while capturing. Half of what is then free may be isolated.
        gc.collect()
        torch.cuda.empty_cache()
        isolate_until = torch.cuda.memory_reserved() + torch.cuda.mem_get_info()[0] // 2
    marks = _OperationMarks(session, isolate, isolate_until)
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


def time_replays(graph, replays=10, warmup=3, runs=5):
    """Milliseconds per replay when replays follow each other, as a program's steps do: the
    median over `runs` of `replays` back-to-back replays. (One replay timed alone can be much
    faster: DenseNet-121's rewired training step took 8.1 ms alone and 22.5 ms back to back.)"""
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / replays)
    return statistics.median(times)


class StateSnapshot:
    """The bytes of the memory a captured training step carries between replays, saved once: every
    candidate runs and is timed from the same start, and the state is put back afterwards, so
    choosing a wiring leaves the weights as the warm-up left them."""

    def __init__(self, state):
        self.views = [torch.empty(0, dtype=torch.uint8, device=s.device).set_(s, 0, (s.nbytes(),), (1,))
                      for s, _ in state]
        # Compared element by element (a float whose low byte differs is a different float).
        self.element_sizes = [size if s.nbytes() % size == 0 else 1 for s, size in state]
        self.saved = self.copy()
        # Every replay advances the CUDA random-number offset (dropout masks): each candidate
        # starts from the same one, and it is put back with the rest. Should PyTorch refuse,
        # offsets move on as before: candidates with dropout then differ and are rejected.
        try:
            self.rng = torch.cuda.get_rng_state()
        except RuntimeError:
            self.rng = None

    def copy(self):
        return [v.clone() for v in self.views]

    def restore(self):
        for v, saved in zip(self.views, self.saved):
            v.copy_(saved)
        if self.rng is not None:
            try:
                torch.cuda.set_rng_state(self.rng)
            except RuntimeError:
                self.rng = None
        torch.cuda.synchronize()


class Reference:
    """What the captured order leaves after one replay, run twice from the same start: bytes
    that differ between the two runs come from nondeterministic kernels (atomics in a backward
    pass) and are set aside, as `nimble bench` does; every other byte must match exactly."""

    def __init__(self, first, second, groups):
        # groups: bytes per element of each tensor given as bytes (1: compared as they are typed).
        self.values, self.groups = first, groups
        self.stable = [_equal_elements(a, b, g) for a, b, g in zip(first, second, groups)]
        self.unchecked_bytes = sum(int((~s).sum()) * v.element_size() * g
                                   for s, v, g in zip(self.stable, first, groups))

    def matched_by(self, tensors):
        return all(bool((_equal_elements(t, v, g) | ~s).all())
                   for t, v, g, s in zip(tensors, self.values, self.groups, self.stable))


def _equal_elements(a, b, group):
    same = a == b
    return same.reshape(-1, group).all(dim=1) if group > 1 else same


def _replay_once(captured, state):
    if state is not None:
        state.restore()
    captured.graph.replay()
    torch.cuda.synchronize()


@torch.no_grad()
def _reference(captured, outputs, state):
    runs = []
    for _ in range(2):
        _replay_once(captured, state)
        runs.append([o.detach().clone() for o in outputs] + (state.copy() if state is not None else []))
    groups = [1] * len(outputs) + (state.element_sizes if state is not None else [])
    return Reference(runs[0], runs[1], groups)


@torch.no_grad()
def replays_as_reference(captured, outputs, state, reference):
    """One replay from the saved state leaves the reference's outputs and state (the elements the
    captured order itself repeats), bit for bit."""
    for o in outputs:
        o.detach().zero_()
    _replay_once(captured, state)
    return reference.matched_by([o.detach() for o in outputs] + (state.views if state is not None else []))


def choose_wiring(captured, outputs, wirings, replays=10, state=None):
    """Rewires `captured` each way in `wirings` (after "chain", the captured order, which is the
    reference), keeps those whose outputs (and `state`, for a training step) equal the reference
    bit for bit after one replay, and settles on the fastest (its report stays in
    captured.report). `outputs`: the tensors the graph writes. With `state` (a StateSnapshot),
    every check starts from the saved state and the state is restored at the end."""
    try:
        captured.rewire("chain")
        captured.reference = _reference(captured, outputs, state)
        captured.unchecked_bytes = captured.reference.unchecked_bytes
        captured.timings_ms["chain"] = time_replays(captured.graph, replays)
        schedule_streams = None  # the uncapped schedule's: a cap at or above it changes nothing
        for w in wirings:
            if w == "chain":
                continue
            if w.startswith("schedule:") and schedule_streams is not None and int(w[9:]) >= schedule_streams:
                continue
            try:
                captured.rewire(w)
            except NimbleError as e:
                captured.rejected[w] = str(e)
                continue
            if w == "schedule":
                schedule_streams = captured.report.get("streams")
            if not replays_as_reference(captured, outputs, state, captured.reference):
                captured.rejected[w] = "outputs or state differ from the captured order's"
                continue
            captured.timings_ms[w] = time_replays(captured.graph, replays)
    finally:
        if state is not None:
            state.restore()
    best = min(captured.timings_ms, key=captured.timings_ms.get)
    if best != captured.wiring:
        captured.rewire(best)
