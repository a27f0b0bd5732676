"""A model benchmarked the way ML-systems people time GPU work: CUDA events around the work, read
with elapsed_time after waiting for the end event (ResNet-50 inference, fp16, channels-last,
batch 8, the same input every step, as benchmark scripts use one).

`per-step` (the default): start.record(); model(x); end.record(); end.synchronize() each step.
`per-block`: five forward passes between the two records, then torch.cuda.synchronize().

The event times are results too: nimble run must leave them true. Each must be above zero and no
longer than the host's own time from the start record to the wait's return (an event pair cannot
span more than the host saw); a run that breaks this exits 1 after naming the step. Their median
is printed as an EVENTS line (the GPU's time per step, which replay should not make longer)."""
import json
import sys
import time

from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

variant = sys.argv[1] if len(sys.argv) > 1 else "per-step"
if variant not in ("per-step", "per-block"):
    raise SystemExit("event_timed_bench.py: variant must be per-step or per-block, not %r" % variant)
passes = 5 if variant == "per-block" else 1

model = torchvision.models.resnet50().cuda().half().eval().to(memory_format=torch.channels_last)
g = torch.Generator(device="cuda").manual_seed(3)
x = torch.randn(8, 3, 224, 224, device="cuda", generator=g).half().to(memory_format=torch.channels_last)
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

event_ms, broken = [], []
mark_loop_start()
with torch.inference_mode():
    for i in range(STEPS):
        host_begin = time.perf_counter()
        start.record()
        for _ in range(passes):
            y = model(x)
        end.record()
        if passes == 1:
            end.synchronize()
        else:
            torch.cuda.synchronize()
        host_ms = (time.perf_counter() - host_begin) * 1e3
        ms = start.elapsed_time(end)
        event_ms.append(ms)
        if not 0 < ms <= host_ms * 1.02 + 0.02:
            broken.append((i, ms, host_ms))
        step_done(i, y)

steady = sorted(event_ms[len(event_ms) // 2:]) or [0.0]
print("EVENTS " + json.dumps({"variant": variant, "median_ms": round(steady[len(steady) // 2], 4),
                              "each_ms": [round(t, 4) for t in event_ms]}), flush=True)
if broken:
    i, ms, host_ms = broken[0]
    raise SystemExit("event_timed_bench.py: %d of %d event pairs untrue, the first at step %d: %.4f ms between the "
                     "events, %.4f ms on the host from the start record to the wait's return" %
                     (len(broken), len(event_ms), i, ms, host_ms))
