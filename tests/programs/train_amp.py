"""ResNet-18 training on CIFAR-shaped batches with AMP (autocast + GradScaler), gradient clipping
and AdamW: the scaler's step syncs with the host inside every step."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
scaler = torch.amp.GradScaler("cuda")
loss_fn = torch.nn.CrossEntropyLoss()
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
for i in range(STEPS):
    x = torch.randn(32, 3, 32, 32, device="cuda", generator=g)
    y = torch.randint(0, 10, (32,), device="cuda", generator=g)
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    step_done(i, loss)
step_done(STEPS, model.fc.weight)
