"""Why a pointer resolved only to a whole allocation: run with NIMBLE_GRAPH_DEBUG=1 (stderr)."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import torch, torchvision
import nimble.torch
name = os.environ.get("MODEL", "googlenet")
kw = {"aux_logits": False, "init_weights": True} if name in ("googlenet", "inception_v3") else {}
m = getattr(torchvision.models, name)(**kw).cuda().eval()
size = 299 if name == "inception_v3" else 224
fast = nimble.torch.Nimble(m).prepare(torch.randn(1, 3, size, size, device="cuda"))
print({k: v for k, v in fast.report.items()})
