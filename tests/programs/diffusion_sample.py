"""Image generation as diffusion sampling scripts write it: a small DDPM U-Net written by hand
(sinusoidal timestep embedding, residual blocks with GroupNorm and SiLU, self-attention at the
lowest resolution through scaled_dot_product_attention), classifier-free guidance (the batch
doubled: conditioned and unconditioned halves, chunked after the model), and a DDIM sampler whose
per-step coefficients are Python floats computed on the host from the noise schedule. Each corpus
step is one denoising step; every 25 steps a new batch of images starts from fresh noise (a new
"prompt" class label), and the finished images' mean is read on the host (a sync), as a script
that saves or logs each batch does. fp16 autocast under torch.inference_mode()."""
import math

from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

SAMPLING_STEPS, BATCH, GUIDANCE, CLASSES = 25, 8, 4.0, 10


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, emb):
        super().__init__()
        self.norm1, self.conv1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.emb = nn.Linear(emb, cout)
        self.norm2, self.conv2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, e):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.emb(F.silu(e))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class Attention(nn.Module):
    def __init__(self, c, heads=4):
        super().__init__()
        self.norm, self.qkv, self.out, self.heads = nn.GroupNorm(8, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1), heads

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).transpose(-1, -2).unbind(1)
        y = F.scaled_dot_product_attention(q, k, v)
        return x + self.out(y.transpose(-1, -2).reshape(b, c, h, w))


class UNet(nn.Module):
    def __init__(self, ch=(64, 128, 256), emb=256):
        super().__init__()
        self.emb_dim = ch[0]
        self.time = nn.Sequential(nn.Linear(ch[0], emb), nn.SiLU(), nn.Linear(emb, emb))
        self.label = nn.Embedding(CLASSES + 1, emb)  # the last one: unconditioned
        self.inp = nn.Conv2d(3, ch[0], 3, padding=1)
        self.down = nn.ModuleList([ResBlock(a, b, emb) for a, b in zip(ch, ch[1:])])
        self.mid, self.attn = ResBlock(ch[-1], ch[-1], emb), Attention(ch[-1])
        self.up = nn.ModuleList([ResBlock(b * 2, a, emb) for a, b in reversed(list(zip(ch, ch[1:])))])
        self.out = nn.Sequential(nn.GroupNorm(8, ch[0]), nn.SiLU(), nn.Conv2d(ch[0], 3, 3, padding=1))

    def forward(self, x, t, y):
        e = self.time(timestep_embedding(t, self.emb_dim)) + self.label(y)
        h, skips = self.inp(x), []
        for blk in self.down:
            h = blk(h, e)
            skips.append(h)
            h = F.avg_pool2d(h, 2)
        h = self.attn(self.mid(h, e))
        for blk in self.up:
            h = F.interpolate(h, scale_factor=2, mode="nearest")
            h = blk(torch.cat([h, skips.pop()], dim=1), e)
        return self.out(h)


model = UNet().cuda().eval()
betas = torch.linspace(1e-4, 0.02, 1000, dtype=torch.float64)
alphas_cumprod = torch.cumprod(1 - betas, dim=0).tolist()  # the sampler's schedule, on the host
timesteps = list(range(999, -1, -1000 // SAMPLING_STEPS))[:SAMPLING_STEPS]
g = torch.Generator(device="cuda").manual_seed(5)

mark_loop_start()
with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
    x = labels = None
    for step in range(STEPS):
        step_begins(step)
        k = step % SAMPLING_STEPS
        if k == 0:  # a new batch: fresh noise, a new class to draw
            x = torch.randn(BATCH, 3, 32, 32, device="cuda", generator=g)
            labels = torch.full((BATCH,), (step // SAMPLING_STEPS) % CLASSES, device="cuda")
            cond = torch.cat([labels, torch.full_like(labels, CLASSES)])
        t = timesteps[k]
        t_prev = timesteps[k + 1] if k + 1 < SAMPLING_STEPS else -1
        eps_cond, eps_uncond = model(torch.cat([x, x]), torch.full((2 * BATCH,), t, device="cuda"), cond).float().chunk(2)
        eps = eps_uncond + GUIDANCE * (eps_cond - eps_uncond)
        a, a_prev = alphas_cumprod[t], alphas_cumprod[t_prev] if t_prev >= 0 else 1.0
        x0 = ((x - math.sqrt(1 - a) * eps) / math.sqrt(a)).clamp(-1, 1)
        x = math.sqrt(a_prev) * x0 + math.sqrt(1 - a_prev) * eps
        if k == SAMPLING_STEPS - 1:
            print(f"batch {step // SAMPLING_STEPS}: mean {x.mean().item():.4f}", flush=True)
        step_done(step, x)
final_state(x)
