"""A training script that saves checkpoints as it goes, as long runs do: torchvision ResNet-50 at
batch 32, bf16 autocast, SGD with Nesterov momentum and a OneCycle schedule, the loss read every
step; every 25 steps the model's and optimizer's state dicts are saved (torch.save into memory:
every tensor copied to the host) and `torch.cuda.empty_cache()` hands the allocator's cached
blocks back to the driver (so later steps may get their buffers at new addresses); every 50 steps
a two-batch validation under no_grad."""
import io
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

BATCH = 32
model = torchvision.models.resnet50(num_classes=100).cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-5)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=STEPS)
loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
gen = torch.Generator(device="cuda").manual_seed(4)
val_x = torch.randn(2, BATCH, 3, 160, 160, device="cuda", generator=gen)
val_y = torch.randint(0, 100, (2, BATCH), device="cuda", generator=gen)
saved = []
mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    model.train()
    x = torch.randn(BATCH, 3, 160, 160, device="cuda", generator=gen).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 100, (BATCH,), device="cuda", generator=gen)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = loss_fn(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    sched.step()
    results = [loss]
    if (step + 1) % 25 == 0:
        buffer = io.BytesIO()
        torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, buffer)
        saved.append(buffer.getbuffer().nbytes)
        torch.cuda.empty_cache()
    if (step + 1) % 50 == 0:
        model.eval()
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            hits = sum((model(val_x[i]).argmax(1) == val_y[i]).sum() for i in range(len(val_x)))
        results.append(hits)
    step_done(step, *results)
print("checkpoints", len(saved), "bytes each", saved[-1] if saved else 0)
