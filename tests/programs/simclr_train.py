"""Self-supervised contrastive training as SimCLR-style scripts write it: two augmented views of
each image made on the GPU (random resized crops through affine_grid/grid_sample with per-image
random parameters, random flips, colour jitter), a ResNet-18 backbone (its classifier dropped)
and a two-layer projection head with batch norm, the NT-Xent loss over the 2N x 2N cosine
similarity matrix with the diagonal masked out, AdamW with a warm-up then cosine learning rate
set by hand every step, and the loss and the positive pairs' top-1 accuracy logged every 10 steps
(two reads on the host)."""
import math

from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
import torchvision
nn = torch.nn
F = torch.nn.functional

BATCH, TEMPERATURE, WARMUP = 64, 0.2, 10


def augment(images, g):
    n = images.size(0)
    scale = torch.empty(n, device="cuda").uniform_(0.5, 1.0, generator=g)
    shift = torch.empty(n, 2, device="cuda").uniform_(-0.25, 0.25, generator=g)
    flip = torch.where(torch.rand(n, device="cuda", generator=g) < 0.5, -1.0, 1.0)
    theta = torch.zeros(n, 2, 3, device="cuda")
    theta[:, 0, 0] = scale * flip
    theta[:, 1, 1] = scale
    theta[:, :, 2] = shift
    grid = F.affine_grid(theta, (n, 3, 64, 64), align_corners=False)
    views = F.grid_sample(images, grid, align_corners=False)
    brightness = torch.empty(n, 1, 1, 1, device="cuda").uniform_(0.6, 1.4, generator=g)
    return (views * brightness).clamp(0, 1)


def nt_xent(z):
    z = F.normalize(z, dim=1)
    sim = z @ z.t() / TEMPERATURE
    sim.fill_diagonal_(float("-inf"))
    n = z.size(0) // 2
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(n)]).cuda()
    return F.cross_entropy(sim, targets), (sim.argmax(dim=1) == targets).float().mean()


backbone = torchvision.models.resnet18()
backbone.fc = nn.Identity()
model = nn.Sequential(backbone, nn.Linear(512, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Linear(512, 128)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-6)
g = torch.Generator(device="cuda").manual_seed(11)
dataset = torch.rand(1024, 3, 72, 72, device="cuda", generator=g)

mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    lr = 1e-3 * (step + 1) / WARMUP if step < WARMUP else 0.5e-3 * (1 + math.cos(math.pi * step / STEPS))
    for group in opt.param_groups:
        group["lr"] = lr
    idx = torch.randint(0, dataset.size(0), (BATCH,), device="cuda", generator=g)
    images = dataset[idx]
    views = torch.cat([augment(images, g), augment(images, g)])
    loss, acc = nt_xent(model(views))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f} top-1 {acc.item():.3f} lr {lr:.2e}", flush=True)
    step_done(step, loss)
final_state(*model.parameters())
