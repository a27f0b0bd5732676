"""The Nimble API for PyTorch (the NeurIPS 2020 paper's interface, on unmodified PyTorch).

    nimble_model = nimble.torch.Nimble(model)          # any nn.Module on the GPU
    nimble_model.prepare(dummy_input, training=False)  # capture, infer dependencies, rewire
    output = nimble_model(rand_input)                  # replay: new input in, output out

    step = nimble.torch.capture_step(train_step, example_batch)  # forward+backward+optimizer
    loss = step(batch)

Inputs must keep the shape, dtype and device prepare() saw (anything else is an error that
says so); non-tensor arguments are captured as constants and must stay equal.
"""
import re

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

from ._native import NimbleError
from ._torch_capture import (StateSnapshot, capture, choose_wiring, replays_as_reference,
                             require_native_allocator, time_replays)

__all__ = ["Nimble", "capture_step", "NimbleError"]

# Every wiring prepare() tries; the fastest that gives the captured order's outputs wins. The
# capped schedules matter for large graphs: a graph of hundreds of streams costs the driver so
# much host time per launch that back-to-back replays run at half speed or worse
# (scripts/gpu/launch_probe.py: DenseNet-121's training step, 721 streams, 20.7 ms per step back
# to back; on 8 streams 8.05 ms; PyTorch's single-stream graph 8.6 ms).
WIRINGS = ("chain", "reduced", "schedule", "schedule:16", "schedule:8", "schedule:4")


def _check_wiring(wiring):
    capped = re.fullmatch(r"schedule:([0-9]{1,4})", wiring) if isinstance(wiring, str) else None
    if wiring != "auto" and wiring not in WIRINGS and not (capped and 1 <= int(capped[1]) <= 1024):
        raise NimbleError(f"unknown wiring {wiring!r} (expected auto, one of {', '.join(WIRINGS)}, "
                          "or schedule:K for the schedule on at most K streams, 1 <= K <= 1024)")


def _describe(t):
    return f"shape {tuple(t.shape)}, {t.dtype}, {t.device}"


class _StaticInputs:
    """The tensors a graph reads its inputs from; new inputs are copied in before a replay."""

    def __init__(self, args, what):
        self.what = what
        self.flat, self.spec = tree_flatten(args)
        self.static = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in self.flat]

    def arguments(self):
        return tree_unflatten(self.static, self.spec)

    def copy_in(self, args):
        flat, spec = tree_flatten(args)
        if spec != self.spec:
            raise NimbleError(f"{self.what}: the arguments' structure changed since prepare() "
                              f"(now {spec}, prepared {self.spec}); call prepare() again")
        for i, (new, old) in enumerate(zip(flat, self.static)):
            if isinstance(old, torch.Tensor):
                if not isinstance(new, torch.Tensor):
                    raise NimbleError(f"{self.what}: argument {i} is no longer a tensor")
                if new.shape != old.shape or new.dtype != old.dtype or new.device != old.device:
                    raise NimbleError(f"{self.what}: argument {i} has {_describe(new)}; prepare() saw "
                                      f"{_describe(old)}. Call prepare() again with this shape")
                if new.data_ptr() != old.data_ptr():
                    old.copy_(new)
            elif new is not old and new != old:
                raise NimbleError(f"{self.what}: argument {i} was {old!r} at prepare() and is {new!r} "
                                  "now (non-tensor arguments are part of the captured graph)")


def _warm_up(fn, iterations):
    # As torch.cuda.graph asks: the first runs (cuDNN/cuBLAS set-up, lazy init) on a side stream.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(iterations):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()


class Nimble(torch.nn.Module):
    """`model` replayed as one multi-stream CUDA graph.

    wiring: "auto" (inference: prepare times every wiring in WIRINGS and PyTorch's own graph, and
    keeps the fastest whose outputs equal the captured order's bit for bit; the report says which:
    one of WIRINGS or "pytorch"; training=True: "schedule:8", untimed, since replays would change
    the weights), or one of "reduced", "schedule", "chain", or "schedule:K" (the schedule on at
    most K streams: fewer forks and joins, which the driver pays for at every launch).
    copy_outputs: return fresh tensors (True) or the graph's own output tensors, which the next
    call overwrites (False: the paper's behaviour, a little faster).
    isolate_memory: every operation allocates from a pool of its own during the capture, so no
    two operations share memory and only real data dependencies order them (a few MB of GPU
    memory per operation; False keeps PyTorch's sharing and much of the order with it). With
    PyTorch's cudaMallocAsync backend (PYTORCH_CUDA_ALLOC_CONF) prepare() raises NimbleError:
    nimble.torch needs the native caching allocator.
    """

    def __init__(self, model, wiring="auto", copy_outputs=True, isolate_memory=True):
        super().__init__()
        _check_wiring(wiring)
        self.model = model
        self.wiring = wiring
        self.copy_outputs = copy_outputs
        self.isolate_memory = isolate_memory
        self._forward = None

    # -- preparing ------------------------------------------------------------------------------
    def prepare(self, *dummy_inputs, training=False, warmup=3):
        """Captures the model on `dummy_inputs` and makes it a rewired graph. training=False:
        inference (no autograd). training=True: forward and backward run through autograd; use
        the output as usual (loss.backward(), optimizer.step())."""
        require_native_allocator("Nimble.prepare")
        self.model.train(training)
        if training:
            self._forward = _TrainingGraphs(self.model, dummy_inputs, self.wiring, warmup, self.isolate_memory)
        else:
            self._forward = _InferenceGraph(self.model, dummy_inputs, self.wiring, warmup, self.copy_outputs,
                                            self.isolate_memory)
        return self

    @property
    def report(self):
        """What prepare() found: wiring chosen, replay times of each, dependency counts."""
        if self._forward is None:
            raise NimbleError("call prepare() first")
        return self._forward.summary()

    def forward(self, *inputs):
        if self._forward is None:
            raise NimbleError("Nimble: call prepare(example_input) before calling the model")
        return self._forward(*inputs)


def _tensors(flat):
    return [o for o in flat if isinstance(o, torch.Tensor)]


def _pytorch_wins(timings_ms, plain):
    """PyTorch's own graph (shared memory, the captured order) is a candidate too: where nothing
    runs concurrently, isolated memory only costs locality (MobileNetV2: 15%). Times it into
    `timings_ms` (the other candidates'); whether it is faster than every one of them."""
    plain.rewire("chain")  # the captured order itself; the report then counts its nodes
    ms = time_replays(plain.graph)
    timings_ms["pytorch"] = ms
    return ms < min(t for w, t in timings_ms.items() if w != "pytorch")


def _inherit(winner, chosen, wiring):
    """The graph kept reports every candidate's times and rejections, and what was set aside."""
    winner.timings_ms, winner.rejected, winner.unchecked_bytes = chosen.timings_ms, chosen.rejected, chosen.unchecked_bytes
    winner.wiring = wiring
    winner.reference = None  # only needed while choosing: about twice the state's size
    return winner


def _summary(captured):
    # unchecked_bytes: output and state bytes the captured order itself did not repeat between two
    # replays (nondeterministic kernels), set aside when candidates were compared.
    return {**captured.report, "wiring": captured.wiring, "replay_ms": captured.timings_ms,
            "rejected": captured.rejected, "operations": captured.operations,
            "operations_sharing_memory": captured.shared_operations,
            "unchecked_bytes": captured.unchecked_bytes}


class _InferenceGraph:
    def __init__(self, model, dummy_inputs, wiring, warmup, copy_outputs, isolate):
        self.inputs = _StaticInputs(dummy_inputs, "Nimble")
        self.copy_outputs = copy_outputs
        with torch.no_grad():
            _warm_up(lambda: model(*self.inputs.arguments()), warmup)
            self.captured, out = capture(lambda: model(*self.inputs.arguments()), isolate=isolate)
        self.out_flat, self.out_spec = tree_flatten(out)
        if wiring != "auto":
            self.captured.rewire(wiring)
            return
        choose_wiring(self.captured, _tensors(self.out_flat), WIRINGS)
        self.captured.reference = None
        with torch.no_grad():
            plain, plain_out = capture(lambda: model(*self.inputs.arguments()), plain=True)
        if _pytorch_wins(self.captured.timings_ms, plain):
            self.captured = _inherit(plain, self.captured, "pytorch")
            self.out_flat, self.out_spec = tree_flatten(plain_out)

    def summary(self):
        return _summary(self.captured)

    def __call__(self, *inputs):
        self.inputs.copy_in(inputs)
        self.captured.graph.replay()
        flat = [o.clone() if self.copy_outputs and isinstance(o, torch.Tensor) else o for o in self.out_flat]
        return tree_unflatten(flat, self.out_spec)


class _TrainingGraphs:
    """Forward and backward as two rewired graphs inside one autograd Function (as
    torch.cuda.make_graphed_callables does, with nimble's wiring)."""

    def __init__(self, model, dummy_inputs, wiring, warmup, isolate):
        self.inputs = _StaticInputs(dummy_inputs, "Nimble")
        for x, d in zip(self.inputs.static, tree_flatten(dummy_inputs)[0]):
            if isinstance(x, torch.Tensor):
                x.requires_grad_(isinstance(d, torch.Tensor) and d.requires_grad)
        self.params = tuple(p for p in model.parameters() if p.requires_grad)
        tensor_inputs = [x for x in self.inputs.static if isinstance(x, torch.Tensor)]
        self.grad_inputs = tuple(x for x in tensor_inputs if x.requires_grad) + self.params

        def fwd_bwd():
            outs = [o for o in tree_flatten(model(*self.inputs.arguments()))[0]
                    if isinstance(o, torch.Tensor) and o.requires_grad]
            torch.autograd.grad(outs, self.grad_inputs, [torch.ones_like(o) for o in outs], allow_unused=True)

        # prepare() leaves the model as it found it: warm-up forwards update BatchNorm statistics.
        saved = [b.detach().clone() for b in model.buffers()]
        _warm_up(fwd_bwd, warmup)
        with torch.no_grad():
            for b, s in zip(model.buffers(), saved):
                b.copy_(s)
        self.fwd, out = capture(lambda: model(*self.inputs.arguments()), isolate=isolate)
        self.out_flat, self.out_spec = tree_flatten(out)
        self.differentiable = [i for i, o in enumerate(self.out_flat)
                               if isinstance(o, torch.Tensor) and o.requires_grad]
        self.grad_outputs = [torch.empty_like(self.out_flat[i]) for i in self.differentiable]
        self.bwd, grads = capture(lambda: torch.autograd.grad([self.out_flat[i] for i in self.differentiable],
                                                              self.grad_inputs, self.grad_outputs,
                                                              allow_unused=True),
                                  pool=self.fwd.graph.pool(), session=self.fwd.session, isolate=isolate)
        self.grads = grads
        # Replaying here would update BatchNorm statistics: no timing, the wiring asked for
        # ("auto": the schedule on at most 8 streams, which was within 3% of the fastest wiring
        # of every training step launch_probe.py measured, where the reduced dependencies, as
        # wide as the graph, ran DenseNet-121's step 2.9x slower back to back; through this
        # class, training_module_probe.py: 10.78 against 11.89 ms per step).
        chosen = "schedule:8" if wiring == "auto" else wiring
        self.fwd.rewire(chosen)
        self.bwd.rewire(chosen)
        self.function = self._function()

    def summary(self):
        return {"forward": _summary(self.fwd), "backward": _summary(self.bwd)}

    def _function(self):
        owner = self

        class Graphed(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *inputs_and_params):
                owner.fwd.graph.replay()
                return tuple(o.detach() if isinstance(o, torch.Tensor) else o for o in owner.out_flat)

            @staticmethod
            def backward(ctx, *grads):
                for static, i in zip(owner.grad_outputs, owner.differentiable):
                    g = grads[i]
                    if g is None:
                        static.zero_()
                    elif g.data_ptr() != static.data_ptr():
                        static.copy_(g)
                owner.bwd.graph.replay()
                n_inputs = len(owner.grad_inputs) - len(owner.params)
                input_grads = [g.detach() if g is not None else None for g in owner.grads[:n_inputs]]
                param_grads = [g.detach() if g is not None else None for g in owner.grads[n_inputs:]]
                # Autograd wants one gradient per forward argument: the tensor inputs, then params.
                per_input = iter(input_grads)
                out = []
                for x in owner.inputs.static:
                    if isinstance(x, torch.Tensor) and x.requires_grad:
                        out.append(next(per_input))
                    else:
                        out.append(None)
                return tuple(out) + tuple(param_grads)

        return Graphed

    def __call__(self, *inputs):
        self.inputs.copy_in(inputs)
        flat_out = self.function.apply(*self.inputs.static, *self.params)
        return tree_unflatten(list(flat_out), self.out_spec)


class CapturedStep:
    """A whole training step (forward, backward, optimizer) replayed as one rewired graph."""

    def __init__(self, step_fn, example, wiring, warmup, isolate):
        self.inputs = _StaticInputs(example, "capture_step")
        self.run = lambda: step_fn(*self.inputs.arguments())  # noqa: E731
        _warm_up(self.run, warmup)
        self.captured, out = capture(self.run, isolate=isolate)
        self.out_flat, self.out_spec = tree_flatten(out)
        if wiring != "auto":
            self.captured.rewire(wiring)
            return
        self.captured.rewire("chain")  # its report says which kernels no operation issued
        why_not = self._cannot_compare()
        if why_not:
            self._keep_pytorch(self.captured, {"all": why_not})
            return
        # Every candidate runs from the state the warm-up left, which is put back afterwards.
        state = StateSnapshot(self.captured.state)
        try:
            choose_wiring(self.captured, _tensors(self.out_flat), WIRINGS, state=state)
            self._settle(state, isolate)
        finally:
            state.restore()
            if self.captured is not None:
                self.captured.reference = None

    def _cannot_compare(self):
        """Why candidates cannot be run from a saved state, or "" when they can."""
        unknown = self.captured.report.get("kernels_without_operation", 0)
        if unknown:
            # Their writes are not in the saved state: replaying candidates would move them on.
            return (f"{unknown} kernel(s) of the step were issued by no PyTorch operation (an extension "
                    "calling CUDA itself): the memory they write is unknown, so candidates cannot be run "
                    "from a saved state; pass wiring= to choose one yourself")
        # The saved state, the reference and its mask of repeated elements: about four times its size.
        needed = 4 * sum(st.nbytes() for st, _ in self.captured.state)
        free = torch.cuda.mem_get_info()[0] + torch.cuda.memory_reserved() - torch.cuda.memory_allocated()
        if needed > free:
            return (f"{needed / 2**30:.1f} GiB needed to compare candidates from a saved state; "
                    "pass wiring= to choose one yourself")
        return ""

    def _keep_pytorch(self, chosen, rejected):
        """PyTorch's own graph of the step, captured last, with `chosen`'s report."""
        chosen.rejected.update(rejected)
        self.captured = chosen.graph = chosen.pools = None  # its memory goes before the next capture
        plain, out = capture(self.run, plain=True)
        plain.rewire("chain")
        self.captured = _inherit(plain, chosen, "pytorch")
        self.out_flat, self.out_spec = tree_flatten(out)

    def _settle(self, state, isolate):
        """After choose_wiring: PyTorch's own graph of the step is timed too, and the graph kept
        is captured last (a step that sets gradients to None makes new ones in every capture, and
        the program's param.grad are the last capture's)."""
        chosen, best = self.captured, self.captured.wiring
        reference = chosen.reference
        chosen.reference = None
        self.captured = chosen.graph = chosen.pools = None  # its memory goes before the next captures
        plain, plain_out = capture(self.run, plain=True)
        state.restore()
        if _pytorch_wins(chosen.timings_ms, plain):
            self.captured = _inherit(plain, chosen, "pytorch")
            self.out_flat, self.out_spec = tree_flatten(plain_out)
            return
        del plain, plain_out
        try:
            again, out = capture(self.run, isolate=isolate)
            again.rewire(best)
            repeated = replays_as_reference(again, _tensors(tree_flatten(out)[0]), state, reference)
        except NimbleError as e:
            repeated, again = False, None
            chosen.rejected[best] = f"captured again, it failed: {e}"
        if repeated:
            self.captured = _inherit(again, chosen, best)
            self.out_flat, self.out_spec = tree_flatten(out)
            return
        chosen.rejected.setdefault(best, "captured again, it did not repeat its outputs")
        chosen.timings_ms.pop(best, None)
        del again
        self._keep_pytorch(chosen, {})

    @property
    def report(self):
        return _summary(self.captured)

    def __call__(self, *batch):
        self.inputs.copy_in(batch)
        self.captured.graph.replay()
        return tree_unflatten(self.out_flat, self.out_spec)


def capture_step(step_fn, *example_batch, wiring="auto", warmup=3, isolate_memory=True):
    """Captures `step_fn(*batch)` (forward, loss.backward(), optimizer.step(); gradients set to
    None by the step itself or by the optimizer's zero_grad) and returns a callable that replays
    it on new batches. The warm-up runs `warmup` real steps, as torch.cuda.graph's recipe does.
    The optimizer must be capturable (SGD, or Adam/AdamW with capturable=True). Returns the
    step's outputs (the graph's own tensors: read them before the next step). wiring and
    isolate_memory: as for Nimble; "auto" times every wiring and PyTorch's own graph of the step
    from the same saved state (weights, optimizer state), keeps the fastest whose outputs and
    state equal the captured order's bit for bit, and puts the state back."""
    _check_wiring(wiring)
    require_native_allocator("capture_step")
    return CapturedStep(step_fn, example_batch, wiring, warmup, isolate_memory)
