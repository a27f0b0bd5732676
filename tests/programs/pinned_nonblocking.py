"""Inference fed from pinned host memory with non_blocking copies, as DataLoader(pin_memory=True)
loops do."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

model = torchvision.models.googlenet(init_weights=True, aux_logits=False).cuda().eval()
batches = [torch.randn(4, 3, 224, 224).pin_memory() for _ in range(4)]
mark_loop_start()
with torch.no_grad():
    for i in range(STEPS):
        x = batches[i % len(batches)].cuda(non_blocking=True)
        out = model(x)
        step_done(i, out)
