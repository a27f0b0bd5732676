"""Node classification with a graph network written by hand, as PyTorch Geometric-free scripts
do: a fixed random graph (edge list on the GPU, self-loops added, symmetric normalisation), three
GCN layers whose message passing gathers source features with index_select and sums them into
the destinations with index_add_ (deterministic algorithms choose a sort-based sum), dropout,
full-batch training with Adam and a masked cross-entropy on the training nodes, and an
evaluation on the validation nodes every 5 steps under torch.no_grad() with the accuracy read on
the host."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

NODES, EDGES, FEATURES, CLASSES, HIDDEN = 20000, 200000, 128, 16, 256


class GCNLayer(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin = nn.Linear(cin, cout)

    def forward(self, x, src, dst, norm):
        h = self.lin(x)
        messages = h.index_select(0, src) * norm[:, None]
        return torch.zeros_like(h).index_add_(0, dst, messages)


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([GCNLayer(FEATURES, HIDDEN), GCNLayer(HIDDEN, HIDDEN), GCNLayer(HIDDEN, CLASSES)])

    def forward(self, x, src, dst, norm):
        for i, layer in enumerate(self.layers):
            x = layer(x, src, dst, norm)
            if i < len(self.layers) - 1:
                x = F.dropout(F.relu(x), p=0.5, training=self.training)
        return x


g = torch.Generator(device="cuda").manual_seed(2)
src = torch.randint(0, NODES, (EDGES,), device="cuda", generator=g)
dst = torch.randint(0, NODES, (EDGES,), device="cuda", generator=g)
loops = torch.arange(NODES, device="cuda")
src, dst = torch.cat([src, dst, loops]), torch.cat([dst, src, loops])
degree = torch.zeros(NODES, device="cuda").index_add_(0, dst, torch.ones_like(dst, dtype=torch.float))
norm = degree[src].rsqrt() * degree[dst].rsqrt()
features = torch.randn(NODES, FEATURES, device="cuda", generator=g)
labels = torch.randint(0, CLASSES, (NODES,), device="cuda", generator=g)
split = torch.rand(NODES, device="cuda", generator=g)
train_mask, val_mask = split < 0.6, (split >= 0.6) & (split < 0.8)

model = GCN().cuda()
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    model.train()
    opt.zero_grad()
    out = model(features, src, dst, norm)
    loss = F.cross_entropy(out[train_mask], labels[train_mask])
    loss.backward()
    opt.step()
    if step % 5 == 4:
        model.eval()
        with torch.no_grad():
            pred = model(features, src, dst, norm).argmax(dim=1)
            acc = (pred[val_mask] == labels[val_mask]).float().mean().item()
        print(f"step {step}: loss {loss.item():.4f} val acc {acc:.3f}", flush=True)
    step_done(step, loss)
final_state(*model.parameters())
