"""Why a rewired training step is slow back to back: each wiring's graph exec launched alone and
again and again, each launch's host time measured; with --execs, also two and three execs of the
same graph launched in turn (the next launch need not wait for the exec still running).
    python scripts/gpu/launch_probe.py densenet121 32 det [WIRING,WIRING,...] [--execs]
(H100, 2026-11-25, DenseNet-121 at 32, deterministic, reduced wiring: 1.55 ms of host per launch
alone, 17 ms back to back, 28 ms with two execs in turn, 41 ms with three; PyTorch's graph
0.14 ms alone and 8.6 ms back to back, which is the GPU's time.)
Launches go through the driver (cuGraphLaunch) on PyTorch's current stream; both execs come from
the same captured graph, so they use the same memory and stream order keeps them one after the
other on the GPU."""
import ctypes, os, statistics, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch, torchvision
from nimble._torch_capture import capture
from nimble.torch import _warm_up

name, batch, det = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "det"
wirings = (sys.argv[4] if len(sys.argv) > 4 else "reduced").split(",")
several_execs = "--execs" in sys.argv
torch.use_deterministic_algorithms(det)
torch.manual_seed(1)
m = getattr(torchvision.models, name)(num_classes=10).cuda().train()
o = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
x = torch.randn(batch, 3, 32, 32, device="cuda"); y = torch.randint(0, 10, (batch,), device="cuda")


def step():
    o.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(m(x), y); loss.backward(); o.step(); return loss


cuda = ctypes.CDLL("libcuda.so.1")
for f in ("cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphUpload", "cuGraphExecDestroy"):
    getattr(cuda, f).restype = ctypes.c_int


def check(r, what):
    if r:
        raise RuntimeError(f"{what} failed: {r}")


def instantiate(graph, flags=0):
    e = ctypes.c_void_p()
    check(cuda.cuGraphInstantiateWithFlags(ctypes.byref(e), ctypes.c_void_p(graph), ctypes.c_ulonglong(flags)), "instantiate")
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    check(cuda.cuGraphUpload(e, stream), "upload")
    return e


def b2b(execs, n=60):
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    for e in execs:
        check(cuda.cuGraphLaunch(e, stream), "launch")
    torch.cuda.synchronize()
    hosts = []
    t = time.perf_counter()
    for i in range(n):
        h = time.perf_counter()
        check(cuda.cuGraphLaunch(execs[i % len(execs)], stream), "launch")
        hosts.append(time.perf_counter() - h)
    issued = time.perf_counter() - t
    torch.cuda.synchronize()
    total = time.perf_counter() - t
    return (f"{total * 1e3 / n:.3f} ms per step (host {issued * 1e3 / n:.3f} per launch, "
            f"median launch {statistics.median(hosts) * 1e3:.3f}, max {max(hosts) * 1e3:.3f})")


def alone(e, n=20):
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    hosts, times = [], []
    for _ in range(n):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); h = time.perf_counter()
        check(cuda.cuGraphLaunch(e, stream), "launch")
        hosts.append(time.perf_counter() - h)
        b.record(); b.synchronize(); times.append(a.elapsed_time(b))
    return f"{statistics.median(times):.3f} ms alone (launch host {statistics.median(hosts) * 1e3:.3f})"


_warm_up(step, 3)
c, _ = capture(step)
for wiring in wirings:
    c.rewire(wiring)
    r = c.report
    print(f"{name} {batch} {'det' if det else 'default'} {wiring}: {r['nodes']} nodes, {r['edges']} edges, "
          f"{r['streams']} streams, {r['syncs']} syncs, longest path {r['longest_path_nodes']}", flush=True)
    raw = c.graph.raw_cuda_graph()
    execs = [instantiate(raw) for _ in range(3 if several_execs else 1)]
    print("  one exec  :", alone(execs[0]), "|", b2b(execs[:1]), flush=True)
    if several_execs:
        print("  two execs :", b2b(execs[:2]), flush=True)
        print("  three     :", b2b(execs), flush=True)
    for e in execs:
        cuda.cuGraphExecDestroy(e)
p, _ = capture(step, plain=True)
p.rewire("chain")
pe = instantiate(p.graph.raw_cuda_graph())
print("  PyTorch's graph, one exec:", alone(pe), "|", b2b([pe]), flush=True)
cuda.cuGraphExecDestroy(pe)
