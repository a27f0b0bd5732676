"""timm training as its train.py does it, by hand: a ResNet-26d from timm, channels-last, bf16
autocast, label smoothing, AdamW from timm's optimizer factory, a per-step cosine schedule from
timm.scheduler (step_update), gradient clipping, and an EMA copy of the weights updated after every
step (timm.utils.ModelEmaV3). The loss is printed every 10 steps, as logging intervals do."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
import timm
from timm.optim import create_optimizer_v2
from timm.scheduler import CosineLRScheduler
from timm.loss import LabelSmoothingCrossEntropy
try:
    from timm.utils import ModelEmaV3 as ModelEma
except ImportError:
    from timm.utils import ModelEmaV2 as ModelEma

model = timm.create_model("resnet26d", num_classes=100).cuda().to(memory_format=torch.channels_last)
ema = ModelEma(model, decay=0.999)
opt = create_optimizer_v2(model, opt="adamw", lr=1e-3, weight_decay=0.05)
sched = CosineLRScheduler(opt, t_initial=max(STEPS, 1), warmup_t=5, warmup_lr_init=1e-5)
loss_fn = LabelSmoothingCrossEntropy(smoothing=0.1)
g = torch.Generator(device="cuda").manual_seed(1)
images = torch.randn(512, 3, 128, 128, device="cuda", generator=g)
targets = torch.randint(0, 100, (512,), device="cuda", generator=g)

mark_loop_start()
model.train()
for step in range(STEPS):
    step_begins(step)
    idx = torch.randint(0, images.size(0), (48,), device="cuda", generator=g)
    x = images[idx].contiguous(memory_format=torch.channels_last)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = loss_fn(model(x), targets[idx])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    ema.update(model, step=step)
    sched.step_update(num_updates=step + 1)
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f} lr {opt.param_groups[0]['lr']:.2e}", flush=True)
    step_done(step, loss)
final_state(*ema.module.parameters())
