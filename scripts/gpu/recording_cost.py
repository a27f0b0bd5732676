"""What recording costs a real program per call, on the GPU machine: GPT-2 (transformers, random
weights, batch 1, 64 tokens) forward passes, timed plain, then timed again inside one
cudaProfilerStart/Stop bracket, which `nimble record` records as one window. Run it plain and under

    NIMBLE_MODE=record NIMBLE_CUPTI=0 NIMBLE_OUTPUT=/tmp/rc.json LD_PRELOAD=build-gpu/lib/libnimble.so \\
      python3 scripts/gpu/recording_cost.py

Prints one JSON line: median ms per pass outside and inside the bracket, and the calls per pass
(counted from the trace written, when given with --trace)."""
import argparse
import json
import statistics
import time

import torch
import transformers

ap = argparse.ArgumentParser()
ap.add_argument("--passes", type=int, default=30)
ap.add_argument("--trace", help="the trace nimble wrote, to count its tasks")
args = ap.parse_args()

torch.manual_seed(0)
config = transformers.GPT2Config(n_layer=12, n_embd=768, n_head=12)
model = transformers.GPT2LMHeadModel(config).cuda().eval()
tokens = torch.randint(0, config.vocab_size, (1, 64), device="cuda")


def timed(n):
    times = []
    with torch.no_grad():
        for _ in range(n):
            start = time.perf_counter()
            model(tokens)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1000)
    return times


timed(10)  # warm-up
outside = timed(args.passes)
torch.cuda.profiler.start()
inside = timed(args.passes)
torch.cuda.profiler.stop()
result = {"outside_ms": round(statistics.median(outside), 3), "inside_ms": round(statistics.median(inside), 3),
          "passes": args.passes}
if args.trace:
    with open(args.trace) as f:
        tasks = len(json.load(f)["tasks"])
    result["tasks_per_pass"] = tasks / args.passes
    result["recording_us_per_task"] = round((result["inside_ms"] - result["outside_ms"]) * 1000 / result["tasks_per_pass"], 2)
print("RECORDING_COST " + json.dumps(result))
