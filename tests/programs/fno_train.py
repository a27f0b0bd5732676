"""A Fourier neural operator learning a 2-D PDE's solution operator, as neural-operator scripts
train it: spectral convolutions (torch.fft.rfft2, a complex einsum over the lowest modes with
complex weights, irfft2: cuFFT under PyTorch's plan cache) beside 1x1 convolutions, GELU, Adam
with a StepLR schedule, a relative L2 loss, the loss read every step. Each batch is made on the
GPU: random smooth coefficient fields (low-pass filtered noise, through cuFFT too) and their
solutions of a screened Poisson equation, solved in Fourier space."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

GRID, MODES, WIDTH, LAYERS, BATCH = 64, 12, 32, 4, 16


class SpectralConv2d(nn.Module):
    def __init__(self, channels, modes):
        super().__init__()
        scale = 1 / (channels * channels)
        self.modes = modes
        self.low = nn.Parameter(scale * torch.randn(channels, channels, modes, modes, dtype=torch.cfloat))
        self.high = nn.Parameter(scale * torch.randn(channels, channels, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        m = self.modes
        x_hat = torch.fft.rfft2(x)
        out = torch.zeros_like(x_hat)
        out[:, :, :m, :m] = torch.einsum("bixy,ioxy->boxy", x_hat[:, :, :m, :m], self.low)
        out[:, :, -m:, :m] = torch.einsum("bixy,ioxy->boxy", x_hat[:, :, -m:, :m], self.high)
        return torch.fft.irfft2(out, s=x.shape[-2:])


class FNO(nn.Module):
    def __init__(self):
        super().__init__()
        self.lift = nn.Conv2d(3, WIDTH, 1)  # the field and the two coordinates
        self.spectral = nn.ModuleList([SpectralConv2d(WIDTH, MODES) for _ in range(LAYERS)])
        self.pointwise = nn.ModuleList([nn.Conv2d(WIDTH, WIDTH, 1) for _ in range(LAYERS)])
        self.project = nn.Sequential(nn.Conv2d(WIDTH, 128, 1), nn.GELU(), nn.Conv2d(128, 1, 1))

    def forward(self, a, coords):
        x = self.lift(torch.cat([a, coords.expand(a.shape[0], -1, -1, -1)], dim=1))
        for i, (spectral, pointwise) in enumerate(zip(self.spectral, self.pointwise)):
            x = spectral(x) + pointwise(x)
            if i < LAYERS - 1:
                x = F.gelu(x)
        return self.project(x)


k = torch.fft.fftfreq(GRID, d=1.0 / GRID, device="cuda")
kx, ky = torch.meshgrid(k, k[: GRID // 2 + 1], indexing="ij")
k2 = (kx ** 2 + ky ** 2)
low_pass = torch.exp(-k2 / 32.0)
screened_inverse = 1.0 / (1.0 + 0.05 * k2)
line = torch.linspace(0, 1, GRID, device="cuda")
coords = torch.stack(torch.meshgrid(line, line, indexing="ij"))[None]
g = torch.Generator(device="cuda").manual_seed(4)


def batch():
    noise = torch.randn(BATCH, 1, GRID, GRID, device="cuda", generator=g)
    a = torch.fft.irfft2(torch.fft.rfft2(noise) * low_pass, s=(GRID, GRID))
    a = a / a.std(dim=(-2, -1), keepdim=True)
    u = torch.fft.irfft2(torch.fft.rfft2(a) * screened_inverse, s=(GRID, GRID))
    return a, u


model = FNO().cuda()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
mark_loop_start()
for i in range(STEPS):
    step_begins(i)
    a, u = batch()
    prediction = model(a, coords)
    loss = (torch.linalg.vector_norm(prediction - u, dim=(-2, -1)) / torch.linalg.vector_norm(u, dim=(-2, -1))).mean()
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    schedule.step()
    step_done(i, loss)
final_state(*model.parameters())
