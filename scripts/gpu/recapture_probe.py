"""One training step's graph timed two ways: one replay alone (synchronised) and back to back.
For the first capture of a wiring, after PyTorch's own capture, and for a second capture.
    python scripts/gpu/recapture_probe.py densenet121 32 det     # or: resnet18 128 default
(H100, 2026-11-25: a second capture replays like the first; DenseNet-121's reduced wiring takes
8.1 ms alone and 22.5 ms back to back, PyTorch's graph 8.6 ms either way.)"""
import os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch, torchvision
import statistics
from nimble._torch_capture import capture
from nimble.torch import _warm_up

name, batch, det = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "det"
torch.use_deterministic_algorithms(det)
torch.manual_seed(1)
m = getattr(torchvision.models, name)(num_classes=10).cuda().train()
o = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(batch, 3, 32, 32, device="cuda"); y = torch.randint(0, 10, (batch,), device="cuda")
def step():
    o.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(m(x), y); loss.backward(); o.step(); return loss
def alone(g, n=20):
    times = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize(); times.append(a.elapsed_time(b))
    return statistics.median(times)
def b2b(g, n=100):
    g.replay(); torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(n): g.replay()
    host = (time.perf_counter() - t) * 1e3 / n  # what the launches cost the host
    torch.cuda.synchronize(); return "%.3f (host %.3f per launch)" % ((time.perf_counter() - t) * 1e3 / n, host)
_warm_up(step, 3)
c1, _ = capture(step)
for w in ("chain", "schedule", "reduced"):
    c1.rewire(w)
    print("first  %-8s: per replay %.3f  back to back %s" % (w, alone(c1.graph), b2b(c1.graph)), flush=True)
p, _ = capture(step, plain=True); p.rewire("chain")
print("plain         : per replay %.3f  back to back %s" % (alone(p.graph), b2b(p.graph)), flush=True)
print("first again   : per replay %.3f  back to back %s" % (alone(c1.graph), b2b(c1.graph)), flush=True)
del p
c2, _ = capture(step); c2.rewire("reduced")
print("second reduced: per replay %.3f  back to back %s" % (alone(c2.graph), b2b(c2.graph)), flush=True)
del c1
print("second, first freed: per replay %.3f  back to back %s" % (alone(c2.graph), b2b(c2.graph)), flush=True)
