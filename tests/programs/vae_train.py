"""A convolutional variational autoencoder trained as tutorials write it: epochs over an
in-memory dataset through a shuffling DataLoader with a short last batch, inputs moved with
`.cuda()`, the reparameterisation trick (`torch.randn_like` every step), a summed BCE + KL loss,
Adam, the epoch's loss summed with `loss.item()` each step, and after every epoch an evaluation
pass over held-out data plus 16 images sampled from the prior (model.eval(), no_grad)."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

LATENT, BATCH = 32, 64


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Sequential(
            nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(), nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(), nn.Flatten(),
            nn.Linear(64 * 7 * 7, 256), nn.ReLU())
        self.mean = nn.Linear(256, LATENT)
        self.log_var = nn.Linear(256, LATENT)
        self.decode = nn.Sequential(
            nn.Linear(LATENT, 256), nn.ReLU(), nn.Linear(256, 64 * 7 * 7), nn.ReLU(), nn.Unflatten(1, (64, 7, 7)),
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(32, 1, 4, 2, 1))

    def forward(self, x):
        h = self.encode(x)
        mean, log_var = self.mean(h), self.log_var(h)
        z = mean + torch.randn_like(mean) * torch.exp(0.5 * log_var)
        return self.decode(z), mean, log_var


def vae_loss(logits, x, mean, log_var):
    bce = F.binary_cross_entropy_with_logits(logits, x, reduction="sum")
    kl = -0.5 * torch.sum(1 + log_var - mean.pow(2) - log_var.exp())
    return (bce + kl) / x.shape[0]


torch.manual_seed(0)
images = (torch.rand(1000, 1, 28, 28) > 0.7).float()  # 15 batches of 64 and a last batch of 40
held_out = (torch.rand(256, 1, 28, 28) > 0.7).float()
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images), batch_size=BATCH, shuffle=True)
val_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(held_out), batch_size=128)
model = VAE().cuda()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
step = 0
mark_loop_start()
for epoch in range(max(1, STEPS // 17)):
    model.train()
    epoch_loss = 0.0
    for (x,) in train_loader:
        step_begins(step)
        x = x.cuda()
        logits, mean, log_var = model(x)
        loss = vae_loss(logits, x, mean, log_var)
        opt.zero_grad()
        loss.backward()
        opt.step()
        epoch_loss += loss.item()
        step_done(step, loss)
        step += 1
    model.eval()
    with torch.no_grad():
        val_loss = 0.0
        for (x,) in val_loader:
            x = x.cuda()
            logits, mean, log_var = model(x)
            val_loss += vae_loss(logits, x, mean, log_var).item()
        samples = torch.sigmoid(model.decode(torch.randn(16, LATENT, device="cuda")))
    print(f"epoch {epoch}: train {epoch_loss / len(train_loader):.2f}, val {val_loss / len(val_loader):.2f}", flush=True)
    step_done(step, val_loss, samples)
    step += 1
final_state(*model.parameters())
