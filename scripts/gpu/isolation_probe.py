"""Does capturing with per-operation memory pools (isolate_memory=True) slow the kernels down? The
captured order ("chain" wiring) replayed with and without the pools, against PyTorch's own graph
of the same model, batch-1 inference, in one process.
    python scripts/gpu/isolation_probe.py resnet50 mobilenet_v2 googlenet"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import torch, torchvision
import nimble.torch
from nimble._torch_capture import capture, time_replays

for name in sys.argv[1:] or ["resnet50"]:
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().cuda().eval()
    x = torch.randn(1, 3, 224, 224, device="cuda")
    row = {}
    for label, isolate in (("chain, pools", True), ("chain, no pools", False)):
        fast = nimble.torch.Nimble(model, wiring="chain", isolate_memory=isolate).prepare(x)
        row[label] = time_replays(fast._forward.captured.graph, 100)
        del fast
    with torch.no_grad():
        plain, _ = capture(lambda: model(x), plain=True)
    plain.rewire("chain")
    row["PyTorch's graph"] = time_replays(plain.graph, 100)
    print(name, "  ".join(f"{k} {v:.3f} ms" for k, v in row.items()), flush=True)
