"""A DLRM-style recommender trained as its scripts write it: dense features through a bottom MLP,
eight categorical features looked up in EmbeddingBag tables (sum pooling, a fixed number of ids
per bag: multi-hot), their pairwise dot-product interactions (bmm, the upper triangle gathered with
triu_indices), a top MLP, BCE with logits, Adagrad for the tables and SGD with momentum for the
MLPs, a fresh synthetic batch drawn on the GPU every step (ids from a skewed distribution), and
the running click-through accuracy read on the host every 20 steps."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

BATCH, DENSE, DIM, HOTS = 2048, 13, 64, 4
TABLE_ROWS = [100000, 50000, 20000, 10000, 5000, 2000, 1000, 500]


def mlp(sizes):
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.bottom = mlp([DENSE, 256, 128, DIM])
        self.tables = nn.ModuleList(nn.EmbeddingBag(rows, DIM, mode="sum") for rows in TABLE_ROWS)
        features = len(TABLE_ROWS) + 1
        self.register_buffer("pairs", torch.triu_indices(features, features, offset=1))
        self.top = mlp([DIM + self.pairs.size(1), 512, 256, 1])

    def forward(self, dense, ids):
        x = self.bottom(dense)
        pooled = [table(ids[:, k]) for k, table in enumerate(self.tables)]
        z = torch.stack([x] + pooled, dim=1)  # (batch, features, dim)
        inter = torch.bmm(z, z.transpose(1, 2))[:, self.pairs[0], self.pairs[1]]
        return self.top(torch.cat([x, inter], dim=1)).squeeze(1)


model = DLRM().cuda()
opt_sparse = torch.optim.Adagrad(model.tables.parameters(), lr=0.02)
opt_dense = torch.optim.SGD(list(model.bottom.parameters()) + list(model.top.parameters()), lr=0.05, momentum=0.9)
g = torch.Generator(device="cuda").manual_seed(5)
rows = torch.tensor(TABLE_ROWS, device="cuda")
correct = torch.zeros((), device="cuda")
seen = 0

mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    dense = torch.randn(BATCH, DENSE, device="cuda", generator=g).abs().log1p()
    skew = torch.rand(BATCH, len(TABLE_ROWS), HOTS, device="cuda", generator=g) ** 3  # popular ids first
    ids = (skew * rows[None, :, None]).long()
    clicks = (dense[:, 0] + 0.1 * ids[:, 0, 0].float() / TABLE_ROWS[0] > 0.9).float()
    logits = model(dense, ids)
    loss = F.binary_cross_entropy_with_logits(logits, clicks)
    opt_sparse.zero_grad()
    opt_dense.zero_grad()
    loss.backward()
    opt_sparse.step()
    opt_dense.step()
    correct += ((logits > 0).float() == clicks).sum()
    seen += BATCH
    if (step + 1) % 20 == 0:
        print(f"step {step + 1}: loss {loss.item():.4f} accuracy {correct.item() / seen:.4f}", flush=True)
    step_done(step, loss)
final_state(*model.parameters())
