"""GPU test of nimble.torch (ctest label gpu; needs PyTorch and torchvision on a GPU).

Checks, on real models, what docs/python.md promises: outputs bitwise equal to eager (inference
and training, deterministic algorithms), errors for changed shapes, and that the rewired graph
really has concurrency (fewer dependencies than the captured chain). Prints what it measured.
"""
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

try:
    import torch
    import torchvision
except ImportError as e:  # CI: no PyTorch
    print(f"SKIP: {e}")
    sys.exit(77)

import nimble
import nimble.torch

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def inference(name, make):
    torch.manual_seed(0)
    model = make().cuda().eval()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    fast = nimble.torch.Nimble(model).prepare(x)
    r = fast.report
    print(f"{name}: wiring {r['wiring']}, replay ms {r['replay_ms']}, nodes {r['nodes']}, "
          f"dependencies {r['reduced_dependencies']} (longest path {r['longest_path_nodes']} nodes), "
          f"pointers in op tensors {r['pointers_in_operation_tensors']}, whole allocations "
          f"{r['pointers_whole_allocation']}, rejected {r['rejected']}", flush=True)
    with torch.no_grad():
        for i in range(3):
            y = torch.randn(1, 3, 224, 224, device="cuda")
            check(torch.equal(fast(y), model(y)), f"{name}: input {i} bitwise equal to eager")
    check(r["longest_path_nodes"] < r["nodes"], f"{name}: the rewired graph is not a chain")
    # Fixed wirings: the captured chain keeps every programmatic edge of the capture, and a
    # schedule capped at 2 streams uses at most 2; both give eager's outputs.
    for wiring in ("chain", "schedule:2"):
        fixed = nimble.torch.Nimble(model, wiring=wiring).prepare(x)
        f = fixed.report
        with torch.no_grad():
            y = torch.randn(1, 3, 224, 224, device="cuda")
            check(torch.equal(fixed(y), model(y)), f"{name}: {wiring} bitwise equal to eager")
        if wiring == "chain":
            check(f["programmatic_edges_dropped"] == 0,
                  f"{name}: the chain keeps the capture's {f['programmatic_edges_kept']} programmatic edges "
                  f"({f['programmatic_edges_dropped']} dropped)")
        else:
            check(f["wiring"] == "schedule:2" and f["streams"] <= 2, f"{name}: schedule:2 uses {f['streams']} streams")
        del fixed
    try:
        fast(torch.randn(2, 3, 224, 224, device="cuda"))
        check(False, f"{name}: a changed batch size is refused")
    except nimble.NimbleError as e:
        check("shape" in str(e), f"{name}: a changed batch size is refused ({e})")


def training_module(steps=20):
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False

    def make():
        torch.manual_seed(1)
        return torchvision.models.resnet18(num_classes=10).cuda()

    data = [(torch.randn(32, 3, 32, 32, device="cuda"), torch.randint(0, 10, (32,), device="cuda")) for _ in range(steps)]
    eager, graphed = make(), make()
    fast = nimble.torch.Nimble(graphed).prepare(data[0][0], training=True)
    print("training forward/backward:", {k: (v["wiring"], v["nodes"], v["longest_path_nodes"]) for k, v in fast.report.items()})
    check(all(v["wiring"] == "schedule:8" and v["streams"] <= 8 for v in fast.report.values()),
          "training (Nimble, training=True): forward and backward on the schedule capped at 8 streams")
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
    opt_g = torch.optim.SGD(graphed.parameters(), lr=0.1, momentum=0.9)
    losses_equal = True
    for x, y in data:
        for model, opt in ((eager, opt_e), (fast, opt_g)):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if model is eager:
                le = loss.item()
            else:
                losses_equal &= le == loss.item()
    check(losses_equal, f"training (Nimble, training=True): {steps} losses bitwise equal to eager")
    check(all(torch.equal(a, b) for a, b in zip(eager.state_dict().values(), graphed.state_dict().values())),
          f"training (Nimble, training=True): weights bitwise equal after {steps} steps")
    torch.use_deterministic_algorithms(False)


def training_step(steps=50, free_memory=None):
    """capture_step against eager. free_memory: what torch.cuda.mem_get_info reports while it
    prepares (too little to save the state: PyTorch's own graph is kept without comparing)."""
    torch.use_deterministic_algorithms(True)
    label = "capture_step" if free_memory is None else "capture_step (no memory to compare)"

    def setup():
        torch.manual_seed(1)
        m = torchvision.models.resnet18(num_classes=10).cuda()
        return m, torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

    torch.manual_seed(0)
    data = [(torch.randn(32, 3, 32, 32, device="cuda"), torch.randint(0, 10, (32,), device="cuda")) for _ in range(steps + 3)]
    me, oe = setup()
    mg, og = setup()

    def step(m, o):
        def run(x, y):
            o.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            return loss
        return run

    eager_step = step(me, oe)
    # capture_step's warm-up runs 3 real steps on the example batch: do the same eagerly.
    for _ in range(3):
        eager_step(*data[0])
    real_mem_get_info, real_reserved = torch.cuda.mem_get_info, torch.cuda.memory_reserved
    if free_memory is not None:
        # A device nearly full: nothing free, nothing cached beyond what tensors hold.
        torch.cuda.mem_get_info = lambda *a: (free_memory, real_mem_get_info(*a)[1])
        torch.cuda.memory_reserved = torch.cuda.memory_allocated
    try:
        graphed_step = nimble.torch.capture_step(step(mg, og), *data[0])
        if free_memory is not None:
            # Past the budget, operations share the graph's pool instead of pools of their own.
            # (A throw-away capture of a copy: the step under test keeps its own state.)
            mp, op = setup()
            probe = nimble.torch.capture_step(step(mp, op), *data[0], wiring="reduced")
            shared = probe.report["operations_sharing_memory"], probe.report["operations"]
            del probe, mp, op
    finally:
        torch.cuda.mem_get_info, torch.cuda.memory_reserved = real_mem_get_info, real_reserved
    r = graphed_step.report
    if free_memory is not None:
        check(r["wiring"] == "pytorch" and "all" in r["rejected"], f"{label}: PyTorch's graph kept ({r['rejected']})")
        check(shared[0] > 0, f"{label}: operations past the memory budget share the graph's pool ({shared[0]} of {shared[1]})")
    print(f"{label}: wiring {r['wiring']} of {r['replay_ms']}, nodes {r['nodes']}, longest path "
          f"{r['longest_path_nodes']}, whole allocations {r['pointers_whole_allocation']}")
    # Choosing replays the step many times from a saved state: the weights, momentum and
    # batch-norm statistics must be put back exactly as the warm-up left them.
    check(all(torch.equal(a, b) for a, b in zip(me.state_dict().values(), mg.state_dict().values())),
          f"{label}: choosing the wiring left the weights and statistics as the warm-up did")
    check(all(torch.equal(oe.state[p]["momentum_buffer"], og.state[q]["momentum_buffer"])
              for p, q in zip(me.parameters(), mg.parameters())),
          f"{label}: choosing the wiring left the optimizer state as the warm-up did")
    check(free_memory is not None or ("pytorch" in r["replay_ms"] and len(r["replay_ms"]) >= 2),
          f"{label}: PyTorch's own graph and nimble's wirings were timed ({sorted(r['replay_ms'])})")
    same = True
    for x, y in data[1:steps + 1]:
        le = eager_step(x, y).item()
        lg = graphed_step(x, y).item()
        same &= le == lg
    check(same, f"{label}: {steps} losses bitwise equal to eager")
    check(all(torch.equal(a, b) for a, b in zip(me.state_dict().values(), mg.state_dict().values())),
          f"{label}: weights bitwise equal after {steps} steps")
    torch.use_deterministic_algorithms(False)


if not torch.cuda.is_available():
    print("SKIP: no GPU")
    sys.exit(77)
inference("googlenet", lambda: torchvision.models.googlenet(weights=None, aux_logits=False, init_weights=True))
inference("resnet50", lambda: torchvision.models.resnet50())
training_module()
training_step()
training_step(steps=10, free_memory=1024)
print("FAILED:" if failures else "all passed", *failures, sep="\n  ")
sys.exit(1 if failures else 0)
