"""torchvision inference at batch 1 (Inception-v3 by default), random weights."""
import sys
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

name = sys.argv[1] if len(sys.argv) > 1 else "inception_v3"
kwargs = {"init_weights": True, "aux_logits": False} if name in ("inception_v3", "googlenet") else {}
model = getattr(torchvision.models, name)(**kwargs).cuda().eval()
size = 299 if name == "inception_v3" else 224
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
with torch.no_grad():
    for i in range(STEPS):
        step_done(i, model(torch.randn(1, 3, size, size, device="cuda", generator=g)))
