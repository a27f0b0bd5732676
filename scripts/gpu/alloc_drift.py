#!/usr/bin/env python3
"""Where PyTorch's caching allocator puts a training step's blocks, step after step: do they come
back to the same addresses (replay writes nothing), rotate among a few sets, or drift? Traces the
allocator itself (torch.cuda.memory._record_memory_history), one ResNet training step per step,
with zero_grad placed where scripts put it.

    python3 scripts/gpu/alloc_drift.py --zero between --steps 40      # forward, zero_grad, backward, step
    python3 scripts/gpu/alloc_drift.py --zero before                  # zero_grad, forward, backward, step
    python3 scripts/gpu/alloc_drift.py --zero between --keep-grads    # zero_grad(set_to_none=False)

Prints, for each step after the first few, how many of its allocations sit where the step before
put them, the shortest period (1-8 steps) after which they all come back, and how many addresses
none of the four steps before used; then a one-line verdict (steady, rotating, drifting)."""
import argparse
import json
import sys

import torch
import torchvision


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--zero", choices=["before", "between", "after"], default="between",
                   help="where optimizer.zero_grad() is called in the step")
    p.add_argument("--keep-grads", action="store_true", help="zero_grad(set_to_none=False)")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--model", default="resnet18", help="a torchvision model name")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--size", type=int, default=96, help="image side")
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    p.add_argument("--json", help="write the per-step allocation addresses here")
    return p.parse_args()


def allocations(trace, begin, end):
    """The step's allocations in order: (address, size)."""
    return [(e["addr"], e["size"]) for e in trace[begin:end] if e["action"] == "alloc"]


def period(steps, k, most=8):
    for p in range(1, most + 1):
        if k - p >= 0 and steps[k - p] == steps[k]:
            return p
    return None


def main():
    a = parse()
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = False
    model = getattr(torchvision.models, a.model)(num_classes=10).cuda()
    opt = (torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9) if a.optimizer == "sgd"
           else torch.optim.AdamW(model.parameters(), lr=1e-3))
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(a.batch, 3, a.size, a.size, device="cuda")
    y = torch.randint(0, 10, (a.batch,), device="cuda")
    set_to_none = not a.keep_grads

    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python")
    bounds = []
    for _ in range(a.steps):
        torch.cuda.synchronize()
        bounds.append(len(torch.cuda.memory._snapshot()["device_traces"][0]))
        if a.zero == "before":
            opt.zero_grad(set_to_none=set_to_none)
        loss = loss_fn(model(x), y)
        if a.zero == "between":
            opt.zero_grad(set_to_none=set_to_none)
        loss.backward()
        opt.step()
        if a.zero == "after":
            opt.zero_grad(set_to_none=set_to_none)
    torch.cuda.synchronize()
    trace = torch.cuda.memory._snapshot()["device_traces"][0]
    bounds.append(len(trace))
    torch.cuda.memory._record_memory_history(enabled=None)
    if bounds[-1] < bounds[0] or len(trace) != bounds[-1]:
        sys.exit("alloc_drift: the allocator's trace wrapped around; run fewer steps")

    steps = [allocations(trace, bounds[i], bounds[i + 1]) for i in range(a.steps)]
    print(f"# {a.model} batch {a.batch} {a.size}px {a.optimizer}, zero_grad {a.zero} forward/backward, "
          f"set_to_none={set_to_none}, torch {torch.__version__}")
    print("step allocations same-as-previous period new-addresses(vs 4 before)")
    kinds = []
    for k in range(4, a.steps):
        now, before = steps[k], steps[k - 1]
        same = sum(1 for i, (addr, _) in enumerate(now) if i < len(before) and before[i][0] == addr)
        seen = {addr for j in range(k - 4, k) for addr, _ in steps[j]}
        new = sum(1 for addr, _ in now if addr not in seen)
        p = period(steps, k)
        kinds.append("steady" if p == 1 else "rotating" if p else "drifting")
        print(f"{k} {len(now)} {same} {p or '-'} {new}")
    settled = kinds[len(kinds) // 2:]
    verdict = max(set(settled), key=settled.count)
    print(f"verdict: {verdict} ({settled.count(verdict)} of the last {len(settled)} steps)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"steps": steps}, f)


if __name__ == "__main__":
    main()
