"""A decoder-only transformer written with nn.TransformerEncoderLayer (causal mask, GELU,
norm-first), trained with activation checkpointing (torch.utils.checkpoint, use_reentrant=False:
each layer's forward runs again in backward), bf16 autocast, two micro-batches accumulated per
optimizer step, fused Adam, and the tokens-per-second and loss logged every 5 steps."""
import time
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
from torch.utils.checkpoint import checkpoint

VOCAB, D, LAYERS, SEQ, BATCH = 8192, 384, 6, 256, 8


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.pos = nn.Parameter(torch.zeros(1, SEQ, D))
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(D, 6, 4 * D, dropout=0.0, activation="gelu",
                                                               batch_first=True, norm_first=True)
                                    for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D)
        self.out = nn.Linear(D, VOCAB, bias=False)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(SEQ), persistent=False)

    def forward(self, ids):
        x = self.emb(ids) + self.pos
        for layer in self.layers:
            x = checkpoint(layer, x, self.mask, None, True, use_reentrant=False)
        return self.out(self.norm(x))


model = LM().cuda()
opt = torch.optim.Adam(model.parameters(), lr=3e-4, fused=True)
g = torch.Generator(device="cuda").manual_seed(5)
corpus = torch.randint(0, VOCAB, (64, SEQ + 1), device="cuda", generator=g)
loss_fn = nn.CrossEntropyLoss()

mark_loop_start()
t0 = time.perf_counter()
for step in range(STEPS):
    step_begins(step)
    total = 0.0
    for micro in range(2):
        rows = torch.randint(0, corpus.size(0), (BATCH,), device="cuda", generator=g)
        seq = corpus[rows]
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(seq[:, :-1])
            loss = loss_fn(logits.reshape(-1, VOCAB).float(), seq[:, 1:].reshape(-1)) / 2
        loss.backward()
        total = total + loss.detach()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if (step + 1) % 5 == 0:
        dt = time.perf_counter() - t0
        print(f"step {step + 1} loss {total.item():.4f} {5 * 2 * BATCH * SEQ / dt:.0f} tok/s", flush=True)
        t0 = time.perf_counter()
    step_done(step, total)
final_state(*model.parameters())
