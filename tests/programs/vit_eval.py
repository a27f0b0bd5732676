"""An evaluation loop as people write one for a vision transformer: a timm ViT-Small built from its
config (random init, no download), channels-last, `torch.inference_mode()` and bf16 autocast,
batches of 32 images and labels copied from pinned host memory with non_blocking, top-1 and
top-5 hits counted on the GPU and read with `.item()` every batch (a running accuracy)."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import timm

BATCH = 32
model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=1000).cuda().eval()
model = model.to(memory_format=torch.channels_last)
host = torch.Generator().manual_seed(2)
images = torch.randn(8, BATCH, 3, 224, 224, generator=host).pin_memory()
labels = torch.randint(0, 1000, (8, BATCH), generator=host).pin_memory()
top1 = top5 = seen = 0
mark_loop_start()
with torch.inference_mode():
    for i in range(STEPS):
        x = images[i % len(images)].to("cuda", non_blocking=True).contiguous(memory_format=torch.channels_last)
        y = labels[i % len(labels)].to("cuda", non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(x)
        best5 = logits.topk(5, dim=1).indices
        top1 += (best5[:, 0] == y).sum().item()
        top5 += (best5 == y[:, None]).any(dim=1).sum().item()
        seen += BATCH
        step_done(i, logits, torch.tensor([top1, top5, seen]))
