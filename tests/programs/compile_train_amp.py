"""torch.compile (default mode) of a training step's model: a timm ConvNeXt-Atto with fp16
autocast and a GradScaler, SGD with momentum; the compiled forward and backward (Inductor's Triton
kernels, AOTAutograd) run eagerly around the optimizer. The loss is read every step."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
import timm

model = timm.create_model("convnext_atto", num_classes=10).cuda()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
scaler = torch.amp.GradScaler("cuda")
g = torch.Generator(device="cuda").manual_seed(2)
images = torch.randn(256, 3, 96, 96, device="cuda", generator=g)
labels = torch.randint(0, 10, (256,), device="cuda", generator=g)
loss_fn = torch.nn.CrossEntropyLoss()

mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    idx = torch.randint(0, 256, (32,), device="cuda", generator=g)
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(compiled(images[idx]), labels[idx])
    opt.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    step_done(step, loss.item())
final_state(*model.parameters())
