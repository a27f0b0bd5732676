"""A small transformer language model trained as many scripts do it: bf16 autocast, gradient
accumulation over 4 micro-batches, gradient clipping, AdamW with a warm-up and cosine learning
rate (LambdaLR: the rate, a host scalar, changes every step), token batches copied from pinned
host memory with non_blocking, and the loss read on the host only every 10 optimizer steps.
One corpus step is one optimizer step (4 forward/backward passes)."""
import math

from corpus_common import STEPS, step_done, mark_loop_start, torch_setup, final_state
torch = torch_setup()
nn = torch.nn

VOCAB, SEQ, BATCH, ACCUMULATE, LOG_EVERY = 1000, 64, 16, 4, 10


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 256)
        self.pos = nn.Parameter(torch.zeros(SEQ, 256))
        layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        self.head = nn.Linear(256, VOCAB)

    def forward(self, tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(SEQ, device=tokens.device)
        return self.head(self.blocks(self.embed(tokens) + self.pos, mask=mask, is_causal=True))


model = TinyLM().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
warmup = 10
sched = torch.optim.lr_scheduler.LambdaLR(
    opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(s, STEPS) / STEPS)))
gen = torch.Generator().manual_seed(1)
data = torch.randint(0, VOCAB, (64, BATCH, SEQ + 1), generator=gen).pin_memory()
running = torch.zeros((), device="cuda")
mark_loop_start()
micro = 0
for step in range(STEPS):
    for _ in range(ACCUMULATE):
        batch = data[micro % len(data)].cuda(non_blocking=True)
        micro += 1
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(batch[:, :-1])
            loss = nn.functional.cross_entropy(logits.float().reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
        (loss / ACCUMULATE).backward()
        running += loss.detach()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    if (step + 1) % LOG_EVERY == 0:
        step_done(step, running / (LOG_EVERY * ACCUMULATE))  # the host reads the loss
        running.zero_()
    else:
        step_done(step)  # no host read: the step's time only
final_state(*model.parameters())
