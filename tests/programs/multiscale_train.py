"""Multi-scale training as detection recipes do it: the input size changes every 10 steps, cycling
through 160, 192 and 224 pixels, so the step comes in three shapes, each for a stretch of steps
(ResNet-18, fp16 autocast with a GradScaler, SGD with momentum, the loss read every step). With
cuDNN's benchmark mode each size is autotuned the first time it comes.

optimizer.zero_grad(set_to_none=True) comes between the forward and the backward pass, as PyTorch's
ImageNet example has it (the gradients' blocks then drift from step to step); ZERO_GRAD_AT=before
calls it before the forward pass instead."""
import os

from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

SIZES, STRETCH = (160, 192, 224), 10
ZERO_FIRST = os.environ.get("ZERO_GRAD_AT", "between") == "before"
model = torchvision.models.resnet18(num_classes=50).cuda().to(memory_format=torch.channels_last)
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=5e-5)
scaler = torch.amp.GradScaler("cuda")
g = torch.Generator(device="cuda").manual_seed(9)
mark_loop_start()
for i in range(STEPS):
    size = SIZES[(i // STRETCH) % len(SIZES)]
    images = torch.randn(24, 3, size, size, device="cuda", generator=g).to(memory_format=torch.channels_last)
    labels = torch.randint(0, 50, (24,), device="cuda", generator=g)
    if ZERO_FIRST:
        optimizer.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(images), labels)
    if not ZERO_FIRST:
        optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    step_done(i, loss)
