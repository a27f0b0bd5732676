"""One torchvision (or timm) model under `nimble bench`, inference or a training step.

Measures, in this process: plain eager and PyTorch's own CUDA graph of the same iteration (medians
of CUDA-event times). Then runs RANGES profiler ranges of one iteration each; nimble records the
last one and replays it with every backend right there. Finally checks that the program's
results are unchanged by the replay:
  infer: the output after the bench is bitwise the output before it;
  train: with CHECK=1, the weights after the bench are bitwise those the recorded step produced
         (nimble must restore every byte it replays over). The host copies this takes are part
         of the recorded step, so timing runs leave CHECK unset and report no check.
Last, with NIMBLE_TORCH=1 (the default) and PyTorch's native allocator (nimble.torch refuses the
cudaMallocAsync backend), the Python API on the same model and input after the bench: `nimble.torch.Nimble(model).prepare(x)` for inference, `capture_step` for training, timed
like the others (its wiring is printed too).
Prints one JSON line (times, checks, versions).

  nimble bench --iteration 5 -o out.json -- python3 scripts/gpu/bench_model.py resnet50
  nimble bench --iteration 5 -o out.json -- python3 scripts/gpu/bench_model.py resnet18 --train --batch 32
Environment: ITERATIONS (200), RANGES (5, must equal nimble's --iteration), CHECK (train only),
DETERMINISTIC=1 (deterministic algorithms, so nimble's byte-for-byte memory check cannot be
confused by kernels whose atomics land in a different order from run to run).
"""
import argparse
import json
import os
import statistics
import sys

deterministic = os.environ.get("DETERMINISTIC") == "1"
if deterministic:
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # read when cuBLAS starts
import torch
import torchvision

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--train", action="store_true", help="a training step (CIFAR-shaped input, SGD)")
parser.add_argument("--batch", type=int, default=None, help="batch size (1 for inference, 32 for training)")
args = parser.parse_args()
name = args.model
batch = args.batch or (32 if args.train else 1)
iterations = int(os.environ.get("ITERATIONS", "200"))
ranges = int(os.environ.get("RANGES", "5"))
check_weights = args.train and os.environ.get("CHECK") == "1"
torch.backends.cudnn.benchmark = not deterministic
if deterministic:
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)  # ops without one still run (warned)
torch.manual_seed(0)


def build_model():
    if name.startswith("timm/"):
        import timm
        return timm.create_model(name[5:], pretrained=False, num_classes=10 if args.train else 1000)
    kwargs = {"num_classes": 10} if args.train else {}
    if name in ("inception_v3", "googlenet"):
        kwargs.update(init_weights=True, aux_logits=False)
    return torchvision.models.get_model(name, weights=None, **kwargs)


model = build_model().cuda()
if args.train:
    model.train()
    size = 32  # CIFAR-shaped
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    target = torch.randint(0, 10, (batch,), device="cuda")
else:
    model.eval()
    size = 299 if name == "inception_v3" else 224
x = torch.randn(batch, 3, size, size, device="cuda")


def step(inp):
    if not args.train:
        with torch.no_grad():
            return model(inp)
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(inp), target)
    loss.backward()
    optimizer.step()
    return loss


def median_ms(fn, n):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(start, end))


for _ in range(20):
    step(x)
torch.cuda.synchronize()
eager_ms = median_ms(lambda: step(x), iterations)

# PyTorch's own CUDA graph of the same iteration (whole-network capture, as its docs show).
cudagraph_ms, cudagraph_error = None, None
try:
    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step(static_x)
    graph.replay()
    torch.cuda.synchronize()
    cudagraph_ms = median_ms(graph.replay, iterations)
except Exception as e:  # a model PyTorch cannot capture still gets its nimble numbers
    cudagraph_error = f"{type(e).__name__}: {e}"[:200]
    torch.cuda.synchronize()

reference = step(x).clone() if not args.train else None
snapshot = None
for i in range(ranges):  # nimble times the first RANGES-1, records and replays the last
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    y = step(x)
    if check_weights and i == ranges - 1:
        # Host copies of what the recorded step produced (replay never writes host memory).
        snapshot = [p.detach().cpu() for p in model.parameters()]
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
# nimble's bench ran inside the last profiler.stop(); everything below sees its aftermath.
if args.train:
    unchanged = None if not check_weights else all(torch.equal(p.detach().cpu(), s) for p, s in zip(model.parameters(), snapshot))
else:
    after = step(x)
    torch.cuda.synchronize()
    unchanged = bool(torch.equal(y, reference) and torch.equal(after, reference))

# The Python API (nimble.torch) on the same iteration, after the bench and its checks.
nimble_torch_ms, nimble_torch_wiring, nimble_torch_error, nimble_torch_note = None, None, None, None
if os.environ.get("NIMBLE_TORCH", "1") == "1":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    try:
        import nimble.torch
        if args.train:
            fast = nimble.torch.capture_step(step, x)
        else:
            fast = nimble.torch.Nimble(model, copy_outputs=False).prepare(x)
        nimble_torch_ms = median_ms(lambda: fast(x), iterations)
        nimble_torch_wiring = fast.report["wiring"]
    except Exception as e:  # the other numbers still count
        if type(e).__name__ == "NimbleError":  # refused (the cudaMallocAsync allocator): a note, not a failure
            nimble_torch_note = str(e)[:200]
        else:
            nimble_torch_error = f"nimble.torch: {type(e).__name__}: {e}"[:200]
        torch.cuda.synchronize()

print(json.dumps({"model": name, "mode": "train" if args.train else "infer", "batch": batch,
                  "eager_ms": eager_ms, "cudagraph_ms": cudagraph_ms, "cudagraph_error": cudagraph_error,
                  "nimble_torch_ms": nimble_torch_ms, "nimble_torch_wiring": nimble_torch_wiring,
                  "nimble_torch_error": nimble_torch_error, "nimble_torch_note": nimble_torch_note,
                  "results_unchanged": unchanged, "device": torch.cuda.get_device_name(),
                  "deterministic": deterministic, "torch": torch.__version__, "cuda": torch.version.cuda,
                  "cudnn": torch.backends.cudnn.version()}))
