"""Semantic segmentation with a small U-Net written by hand (conv-BN-ReLU blocks, max-pool down,
transposed-conv up, skip concatenations), fp16 autocast with a GradScaler, a Dice + BCE loss,
SGD with Nesterov momentum and a step decay, and a running IoU kept on the GPU (no sync) that is
read once every 20 steps. Random crops of a fixed image set on the GPU, as an in-memory dataset."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256)):
        super().__init__()
        self.downs = nn.ModuleList()
        cin = 3
        for w in widths:
            self.downs.append(block(cin, w))
            cin = w
        self.bottom = block(widths[-1], widths[-1] * 2)
        self.ups, self.up_blocks = nn.ModuleList(), nn.ModuleList()
        cin = widths[-1] * 2
        for w in reversed(widths):
            self.ups.append(nn.ConvTranspose2d(cin, w, 2, stride=2))
            self.up_blocks.append(block(w * 2, w))
            cin = w
        self.head = nn.Conv2d(widths[0], 1, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, blk, skip in zip(self.ups, self.up_blocks, reversed(skips)):
            x = blk(torch.cat([up(x), skip], dim=1))
        return self.head(x)


def dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    inter = (p * target).sum(dim=(1, 2, 3))
    return 1 - ((2 * inter + eps) / (p.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) + eps)).mean()


model = UNet().cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=50, gamma=0.5)
scaler = torch.amp.GradScaler("cuda")
g = torch.Generator(device="cuda").manual_seed(3)
images = torch.rand(64, 3, 192, 192, device="cuda", generator=g)
masks = (torch.rand(64, 1, 192, 192, device="cuda", generator=g) > 0.7).float()
inter_sum = torch.zeros((), device="cuda")
union_sum = torch.zeros((), device="cuda")

mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    idx = torch.randint(0, 64, (8,), device="cuda", generator=g)
    ox, oy = (step * 7) % 64, (step * 13) % 64
    x = images[idx, :, oy:oy + 128, ox:ox + 128]
    y = masks[idx, :, oy:oy + 128, ox:ox + 128]
    opt.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        loss = F.binary_cross_entropy_with_logits(logits, y) + dice_loss(logits.float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    sched.step()
    with torch.no_grad():
        pred = (logits > 0).float()
        inter_sum += (pred * y).sum()
        union_sum += ((pred + y) > 0).float().sum()
    if (step + 1) % 20 == 0:
        print(f"step {step + 1} IoU {(inter_sum / union_sum).item():.4f}", flush=True)
    step_done(step, loss)
final_state(*model.parameters())
