"""An ordinary, unmodified inference or training loop, for `nimble run` (correctness and speed).

Each iteration draws a fresh random input on the GPU (a new RNG offset every time), runs the
model (inference), or a training step (CIFAR-shaped input, SGD with momentum), and copies the
result to the host. One line per iteration gives the SHA-1 of the result bytes (the output, or
the loss); training ends with the SHA-1 of all weights. Run it plainly and under `nimble run`:
those lines must be identical. The last line is JSON with the median wall time per iteration
over the last TIMED iterations (what the user waits for, host work included).

  python3 scripts/gpu/run_model.py resnet50          (or timm/NAME where timm is installed)
  nimble run -o out.json -- python3 scripts/gpu/run_model.py resnet50
  nimble run -o out.json -- python3 scripts/gpu/run_model.py resnet18 --train --batch 32
Environment: ITERATIONS (150), TIMED (100), DETERMINISTIC=1 (deterministic algorithms: needed for
equal bytes between two processes), SHAPE_CHANGE_AT=K (iterations K..K+2 use batch 2),
PROFILE_ITERATION=K (bracket iteration K with torch.cuda.profiler.start/stop, for
`nimble run --capture-range cudaProfilerApi`; the loop is otherwise unchanged).
"""
import argparse
import hashlib
import json
import os
import statistics
import time

deterministic = os.environ.get("DETERMINISTIC") == "1"
if deterministic:
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # read when cuBLAS starts
import torch
import torchvision

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--train", action="store_true")
parser.add_argument("--batch", type=int, default=None)
args = parser.parse_args()
batch = args.batch or (32 if args.train else 1)
iterations = int(os.environ.get("ITERATIONS", "150"))
timed = min(int(os.environ.get("TIMED", "100")), iterations)
shape_change_at = int(os.environ.get("SHAPE_CHANGE_AT", "-1"))
profile_iteration = int(os.environ.get("PROFILE_ITERATION", "-1"))
torch.backends.cudnn.benchmark = not deterministic
if deterministic:
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
torch.manual_seed(0)

size = 32 if args.train else (299 if args.model == "inception_v3" else 224)
if args.model.startswith("timm/"):  # timm models where timm is installed: timm/NAME
    import timm
    model = timm.create_model(args.model[5:], pretrained=False, num_classes=10 if args.train else 1000).cuda()
    if not args.train:
        size = model.default_cfg.get("input_size", (3, 224, 224))[-1]
else:
    kwargs = {"num_classes": 10} if args.train else {}
    if args.model in ("inception_v3", "googlenet"):
        kwargs.update(init_weights=True, aux_logits=False)
    model = torchvision.models.get_model(args.model, weights=None, **kwargs).cuda()
generator = torch.Generator(device="cuda")
generator.manual_seed(1234)
if args.train:
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
else:
    model.eval()


def digest(t):
    return hashlib.sha1(t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()).hexdigest()[:16]


times = []
for i in range(iterations):
    if i == profile_iteration:
        torch.cuda.profiler.start()
    start = time.perf_counter()
    b = 2 if shape_change_at >= 0 and shape_change_at <= i < shape_change_at + 3 else batch
    x = torch.randn(b, 3, size, size, device="cuda", generator=generator)
    if args.train:
        target = torch.randint(0, 10, (b,), device="cuda", generator=generator)
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
        line = digest(loss)
    else:
        with torch.no_grad():
            line = digest(model(x))
    times.append(time.perf_counter() - start)
    if i == profile_iteration:
        torch.cuda.profiler.stop()
    print(f"iteration {i} {line}", flush=True)
if args.train:
    weights = hashlib.sha1()
    for p in model.parameters():
        weights.update(p.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    print(f"weights {weights.hexdigest()[:16]}")
print(json.dumps({"model": args.model, "mode": "train" if args.train else "infer", "batch": batch,
                  "median_ms": 1000 * statistics.median(times[-timed:]), "iterations": iterations,
                  "timed": timed, "deterministic": deterministic, "device": torch.cuda.get_device_name(),
                  "torch": torch.__version__, "cuda": torch.version.cuda,
                  "cudnn": torch.backends.cudnn.version()}))
