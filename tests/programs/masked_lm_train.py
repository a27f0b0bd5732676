"""Masked-language-model pre-training as BERT-style scripts write it: a small transformer encoder
(nn.TransformerEncoder, dropout on), 15% of the tokens masked afresh each step on the GPU, and the
loss taken over the masked positions only by boolean indexing (`logits[mask]`: a nonzero, so a
sync and a different number of rows every step), AdamW with linear warm-up (LambdaLR), gradient
clipping, a running mean of the loss read every step (`loss.item()`, as progress bars do), and an
evaluation on a fixed held-out batch every 40 steps (model.eval(), no_grad, masked accuracy)."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

VOCAB, WIDTH, HEADS, LAYERS, SEQ, BATCH = 2000, 256, 4, 4, 128, 32
MASK_ID, MASK_RATE, EVAL_EVERY = 1, 0.15, 40


class MaskedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Embedding(SEQ, WIDTH)
        layer = nn.TransformerEncoderLayer(WIDTH, HEADS, 4 * WIDTH, dropout=0.1, batch_first=True,
                                           norm_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1], device=ids.device))
        return self.head(self.norm(self.encoder(x)))


def mask_tokens(ids, generator):
    """BERT's recipe, shortened: 15% of positions chosen, replaced by the mask token."""
    chosen = torch.rand(ids.shape, device=ids.device, generator=generator) < MASK_RATE
    return ids.masked_fill(chosen, MASK_ID), chosen


model = MaskedLM().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
warmup = 30
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
g = torch.Generator(device="cuda").manual_seed(7)
held_out = torch.randint(2, VOCAB, (BATCH, SEQ), device="cuda", generator=g)
held_in, held_mask = mask_tokens(held_out, g)

running = 0.0
mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    model.train()
    ids = torch.randint(2, VOCAB, (BATCH, SEQ), device="cuda", generator=g)
    inputs, chosen = mask_tokens(ids, g)
    logits = model(inputs)
    loss = F.cross_entropy(logits[chosen], ids[chosen])
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    running = 0.9 * running + 0.1 * loss.item()
    results = [loss]
    if (step + 1) % EVAL_EVERY == 0:
        model.eval()
        with torch.no_grad():
            predicted = model(held_in)[held_mask].argmax(-1)
            accuracy = (predicted == held_out[held_mask]).float().mean().item()
        print(f"step {step + 1}: running loss {running:.4f}, masked accuracy {accuracy:.4f}", flush=True)
        results.append(accuracy)
    step_done(step, *results)
final_state(*model.parameters())
