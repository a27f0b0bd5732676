"""nimble.torch against its peers, in one process: eager, PyTorch's CUDA graph,
torch.compile(mode="reduce-overhead") and nimble's rewired graph (docs/python.md).

    python scripts/gpu/python_api_bench.py --out results/   # writes python_api.csv and .md

Inference at batch 1 (fp32, eval, no_grad) and CIFAR-shaped training steps (SGD with momentum,
the whole step as one graph). Every number is the median over 5 runs of 100 back-to-back calls
(ms per call, CUDA events); outputs of the graphs are checked against eager.
"""
import argparse
import datetime
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))

import torch
import torchvision

import nimble.torch

INFERENCE = ["googlenet", "inception_v3", "timm:pnasnet5large", "timm:nasnetalarge", "resnet50", "mobilenet_v2",
             "densenet121", "vit_b_16"]
TRAINING = [("resnet18", 32), ("resnet18", 128), ("mobilenet_v2", 32), ("mobilenet_v2", 128), ("densenet121", 32)]


def per_call_ms(fn, calls=100, runs=5):
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / calls)
    return statistics.median(out)


def make_model(name, num_classes=1000):
    if name.startswith("timm:"):
        import timm
        return timm.create_model(name[5:], pretrained=False, num_classes=num_classes)
    kw = {"num_classes": num_classes}
    if name in ("googlenet", "inception_v3"):
        kw.update(aux_logits=False, init_weights=True)
    return getattr(torchvision.models, name)(**kw)


def input_size(name, model):
    if name.startswith("timm:"):
        return model.default_cfg["input_size"][1:]
    return (299, 299) if name == "inception_v3" else (224, 224)


def torch_graph(fn, static_in):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn(static_in)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn(static_in)
    return g, out


def inference_row(name, compile_too):
    torch.manual_seed(0)
    model = make_model(name).cuda().eval()
    h, w = input_size(name, model)
    x = torch.randn(1, 3, h, w, device="cuda")
    row = {"kind": "inference", "model": name, "batch": 1}
    with torch.no_grad():
        ref = model(x)
        row["eager_ms"] = per_call_ms(lambda: model(x))
        static = x.clone()
        g, g_out = torch_graph(model, static)
        row["cuda_graph_ms"] = per_call_ms(lambda: (static.copy_(x), g.replay()))
        g.replay()
        row["cuda_graph_equal"] = torch.equal(g_out, ref)
        del g
        t0 = time.time()
        fast = nimble.torch.Nimble(model, copy_outputs=False).prepare(x)
        row["nimble_prepare_s"] = time.time() - t0
        row["nimble_ms"] = per_call_ms(lambda: fast(x))
        row["nimble_equal"] = torch.equal(fast(x), ref)
        r = fast.report
        row.update(nimble_wiring=r["wiring"], nimble_chain_ms=r["replay_ms"]["chain"], nodes=r["nodes"],
                   longest_path_nodes=r["longest_path_nodes"], streams=r["streams"],
                   whole_allocation_pointers=r["pointers_whole_allocation"])
        del fast
        if compile_too:
            t0 = time.time()
            compiled = torch.compile(model, mode="reduce-overhead")
            for _ in range(3):
                compiled(x)
            row["compile_s"] = time.time() - t0
            row["compile_ms"] = per_call_ms(lambda: compiled(x))
            del compiled
            torch._dynamo.reset()
    torch.cuda.empty_cache()
    return row


def training_row(name, batch, deterministic):
    # Deterministic algorithms: the same bits from every run, so nimble's concurrent wirings can be
    # checked against the captured order (with atomics in the backward they cannot, and
    # capture_step keeps an order whose results it can vouch for).
    torch.use_deterministic_algorithms(deterministic)
    def setup():
        torch.manual_seed(1)
        m = make_model(name, num_classes=10).cuda().train()
        return m, torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)

    x = torch.randn(batch, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")

    def step_of(m, o):
        def step(x, y):
            o.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            return loss
        return step

    row = {"kind": "training", "model": name, "batch": batch,
           "mode": "deterministic" if deterministic else "default"}
    m, o = setup()
    step = step_of(m, o)
    row["eager_ms"] = per_call_ms(lambda: step(x, y), calls=20)
    m, o = setup()
    step = step_of(m, o)
    sx, sy = x.clone(), y.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step(sx, sy)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step(sx, sy)
    row["cuda_graph_ms"] = per_call_ms(lambda: (sx.copy_(x), sy.copy_(y), g.replay()), calls=20)
    del g
    m, o = setup()
    t0 = time.time()
    fast = nimble.torch.capture_step(step_of(m, o), x, y)
    row["nimble_prepare_s"] = time.time() - t0
    row["nimble_ms"] = per_call_ms(lambda: fast(x, y), calls=20)
    r = fast.report
    row.update(nimble_wiring=r["wiring"], nodes=r["nodes"], longest_path_nodes=r["longest_path_nodes"],
               whole_allocation_pointers=r["pointers_whole_allocation"],
               candidates_ms=" ".join([f"{w}={ms:.3f}" for w, ms in sorted(r["replay_ms"].items())] +
                                      [f"{w}=rejected" for w in sorted(r["rejected"])]),
               unchecked_bytes=r["unchecked_bytes"])
    del fast
    torch.cuda.empty_cache()
    return row


COLUMNS = ["kind", "model", "batch", "mode", "eager_ms", "cuda_graph_ms", "compile_ms", "nimble_ms", "nimble_chain_ms",
           "nimble_wiring", "graph_vs_nimble", "compile_vs_nimble", "eager_vs_nimble", "nodes", "longest_path_nodes",
           "streams", "whole_allocation_pointers", "nimble_prepare_s", "compile_s", "cuda_graph_equal", "nimble_equal",
           "candidates_ms", "unchecked_bytes"]


def fmt(v):
    return f"{v:.3f}" if isinstance(v, float) else ("" if v is None else str(v))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=".", help="folder for python_api.csv and python_api.md")
    ap.add_argument("--models", default=",".join(INFERENCE), help="inference models (timm:NAME for timm)")
    ap.add_argument("--compile", default="googlenet,inception_v3,resnet50",
                    help="models also run with torch.compile(mode='reduce-overhead') (slow to compile)")
    ap.add_argument("--training", default=";".join(f"{m}:{b}" for m, b in TRAINING), help="model:batch;...")
    ap.add_argument("--training-modes", default="default,deterministic",
                    help="training rows with PyTorch's default algorithms and/or deterministic ones")
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = False
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # for deterministic cuBLAS
    rows = []
    for name in [m for m in args.models.split(",") if m]:
        rows.append(inference_row(name, name in args.compile.split(",")))
        print({k: fmt(v) for k, v in rows[-1].items()}, flush=True)
    for item in [t for t in args.training.split(";") if t]:
        name, batch = item.split(":")
        for mode in [m for m in args.training_modes.split(",") if m]:
            rows.append(training_row(name, int(batch), mode == "deterministic"))
            print({k: fmt(v) for k, v in rows[-1].items()}, flush=True)
    for r in rows:
        r["graph_vs_nimble"] = r["cuda_graph_ms"] / r["nimble_ms"]
        r["eager_vs_nimble"] = r["eager_ms"] / r["nimble_ms"]
        if "compile_ms" in r:
            r["compile_vs_nimble"] = r["compile_ms"] / r["nimble_ms"]
    os.makedirs(args.out, exist_ok=True)
    device = torch.cuda.get_device_name()
    stamp = f"{datetime.date.today()} on {device}, PyTorch {torch.__version__}"
    with open(os.path.join(args.out, "python_api.csv"), "w") as f:
        f.write(f"# {stamp}\n" + ",".join(COLUMNS) + "\n")
        for r in rows:
            f.write(",".join(fmt(r.get(c)) for c in COLUMNS) + "\n")
    with open(os.path.join(args.out, "python_api.md"), "w") as f:
        f.write(f"# nimble.torch against its peers ({stamp})\n\n")
        f.write("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n")
        for r in rows:
            f.write("| " + " | ".join(fmt(r.get(c)) for c in COLUMNS) + " |\n")
    print(open(os.path.join(args.out, "python_api.md")).read())


if __name__ == "__main__":
    main()
