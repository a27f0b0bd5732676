"""A mixture-of-experts language model trained as the Mixtral- and Switch-style reference code
writes it: each block's feed-forward layer is eight experts behind a router; every token goes to
its top two (softmax over the router's logits, torch.topk), and each expert gathers its tokens
with torch.where over the routing mask (a host sync: how many tokens an expert gets is known only
on the GPU), runs them and adds them back with index_add_, so the kernels' shapes change from step
to step as the routing does. A load-balancing loss, bf16 autocast, AdamW, gradient clipping, the
loss and the busiest expert's share read every step."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

VOCAB, DIM, HEADS, BLOCKS, EXPERTS, TOP, BATCH, LENGTH = 4096, 256, 4, 4, 8, 2, 8, 128


class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(DIM, EXPERTS, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM)) for _ in range(EXPERTS))

    def forward(self, x):
        tokens = x.reshape(-1, DIM)
        probs = F.softmax(self.router(tokens), dim=-1, dtype=torch.float)
        weights, chosen = torch.topk(probs, TOP, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        mask = F.one_hot(chosen, EXPERTS).permute(2, 1, 0)  # expert, slot, token
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            slot, token = torch.where(mask[e])
            if token.numel() == 0:
                continue
            out.index_add_(0, token, expert(tokens[token]) * weights[token, slot, None])
        # Switch Transformer's auxiliary loss: the fraction routed to each expert times its mean probability
        load = mask.float().sum(dim=(1, 2)) / (tokens.shape[0] * TOP)
        balance = EXPERTS * (load * probs.mean(dim=0)).sum()
        return out.reshape(x.shape), balance, load.max()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.attention = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.moe = Experts()

    def forward(self, x, causal):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, attn_mask=causal, need_weights=False)[0]
        y, balance, busiest = self.moe(self.norm2(x))
        return x + y, balance, busiest


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.position = nn.Parameter(torch.randn(LENGTH, DIM) * 0.02)
        self.blocks = nn.ModuleList(Block() for _ in range(BLOCKS))
        self.norm = nn.LayerNorm(DIM)

    def forward(self, ids, causal):
        x = self.embed(ids) + self.position
        balance, busiest = 0.0, []
        for block in self.blocks:
            x, b, top = block(x, causal)
            balance = balance + b
            busiest.append(top)
        return self.norm(x) @ self.embed.weight.t(), balance / BLOCKS, torch.stack(busiest).max()


model = LM().cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
causal = torch.triu(torch.full((LENGTH, LENGTH), float("-inf"), device="cuda"), diagonal=1)
g = torch.Generator(device="cuda").manual_seed(11)
mark_loop_start()
for i in range(STEPS):
    step_begins(i)
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH + 1), device="cuda", generator=g)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits, balance, busiest = model(ids[:, :-1], causal)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB).float(), ids[:, 1:].reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    (loss + 0.01 * balance).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    step_done(i, loss, busiest)
final_state(*model.parameters())
