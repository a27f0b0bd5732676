"""One torchvision model under `nimble bench`: measures plain eager and PyTorch's own CUDA graph in
this process, then runs RANGES profiler ranges of one forward pass each (nimble records the last
one and replays it with every backend right there), then checks the program's results are
unchanged by the replay. Prints one JSON line (the eager and CUDA-graph medians, the check).

  nimble bench --iteration 5 -o out.json -- python3 scripts/gpu/bench_model.py resnet50
Environment: BATCH (1), ITERATIONS (200), RANGES (5, must equal nimble's --iteration).
"""
import json
import os
import statistics
import sys

import torch
import torchvision

name = sys.argv[1]
batch = int(os.environ.get("BATCH", "1"))
iterations = int(os.environ.get("ITERATIONS", "200"))
ranges = int(os.environ.get("RANGES", "5"))
torch.backends.cudnn.benchmark = True
torch.manual_seed(0)
kwargs = {"init_weights": True} if name in ("inception_v3", "googlenet") else {}
if name in ("inception_v3", "googlenet"):
    kwargs["aux_logits"] = False
model = torchvision.models.get_model(name, weights=None, **kwargs).cuda().eval()
size = 299 if name == "inception_v3" else 224
x = torch.randn(batch, 3, size, size, device="cuda")


def median_ms(fn, n):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(start, end))


with torch.no_grad():
    for _ in range(20):
        model(x)
    torch.cuda.synchronize()
    eager_ms = median_ms(lambda: model(x), iterations)

    # PyTorch's own CUDA graph of the same forward pass.
    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
    graph.replay()
    torch.cuda.synchronize()
    cudagraph_ms = median_ms(graph.replay, iterations)

    reference = model(x).clone()
    for i in range(ranges):  # nimble times the first RANGES-1, records and replays the last
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        y = model(x)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    after = model(x)
    torch.cuda.synchronize()
    unchanged = bool(torch.equal(y, reference) and torch.equal(after, reference))

print(json.dumps({"model": name, "batch": batch, "eager_ms": eager_ms, "cudagraph_ms": cudagraph_ms,
                  "results_unchanged": unchanged, "device": torch.cuda.get_device_name()}))
