"""Nimble(model).prepare(x, training=True) with each wiring: ms per training step (forward and
backward replayed as graphs through autograd, the optimizer eager), steps back to back, against
eager; deterministic algorithms. Picks the default for training (no timing there).
    python scripts/gpu/training_module_probe.py densenet121 32 reduced,schedule:8
(The output in docs/benchmarks/python-api-h100-nov25 came from this loop with 3 warm-up steps
before the timed runs instead of per_call_ms's one.)"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch, torchvision
import nimble.torch
from python_api_bench import per_call_ms  # this folder: the same timing as the bench's

name, batch = sys.argv[1], int(sys.argv[2])
wirings = (sys.argv[3] if len(sys.argv) > 3 else "reduced,schedule:8").split(",")
torch.use_deterministic_algorithms(True)
x = torch.randn(batch, 3, 32, 32, device="cuda")
y = torch.randint(0, 10, (batch,), device="cuda")


def time_steps(model, params):
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return per_call_ms(step, calls=20)  # steps back to back, median of 5 runs


torch.manual_seed(1)
m = getattr(torchvision.models, name)(num_classes=10).cuda().train()
row = {"eager": time_steps(m, m.parameters())}
for w in wirings:
    torch.manual_seed(1)
    m = getattr(torchvision.models, name)(num_classes=10).cuda().train()
    fast = nimble.torch.Nimble(m, wiring=w).prepare(x, training=True)
    row[w] = time_steps(fast, m.parameters())
    del fast
print(name, batch, "  ".join(f"{k} {v:.3f} ms" for k, v in row.items()), flush=True)
