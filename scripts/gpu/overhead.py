"""Eager ResNet-50 batch-1 inference loop for the overhead measurement. Prints one JSON line:
the median iteration time, and (when NIMBLE_MODE=record) the time of the iteration that was
recorded between torch.cuda.profiler.start()/stop()."""
import json
import os
import statistics
import time

import torch
import torchvision

torch.backends.cudnn.benchmark = True
model = torchvision.models.resnet50(weights=None).cuda().eval()
x = torch.randn(1, 3, 224, 224, device="cuda")
iterations = int(os.environ.get("ITERATIONS", "300"))
record_at = iterations // 2 if os.environ.get("NIMBLE_MODE") == "record" else -1
times, recorded_ms = [], None
with torch.no_grad():
    for _ in range(30):
        model(x)
    torch.cuda.synchronize()
    for i in range(iterations):
        if i == record_at:
            torch.cuda.profiler.start()
        start = time.perf_counter()
        model(x)
        torch.cuda.synchronize()
        elapsed = (time.perf_counter() - start) * 1e3
        if i == record_at:
            torch.cuda.profiler.stop()
            recorded_ms = elapsed
        else:
            times.append(elapsed)
print(json.dumps({"median_ms": statistics.median(times), "recorded_ms": recorded_ms, "iterations": iterations,
                  "preload": "libnimble" in os.environ.get("LD_PRELOAD", ""),
                  "mode": os.environ.get("NIMBLE_MODE", "")}))
