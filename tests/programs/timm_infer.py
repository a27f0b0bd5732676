"""Inference with a timm model built from its config (random init, no download), batch 1."""
import sys
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import timm

name = sys.argv[1] if len(sys.argv) > 1 else "pnasnet5large"
model = timm.create_model(name, pretrained=False, num_classes=1000).cuda().eval()
size = model.default_cfg.get("input_size", (3, 224, 224))
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
with torch.no_grad():
    for i in range(STEPS):
        x = torch.randn(1, *size, device="cuda", generator=g)
        out = model(x)
        step_done(i, out)
