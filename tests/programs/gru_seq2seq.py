"""A sequence-to-sequence model with attention as PyTorch's "translation with a sequence to
sequence network and attention" tutorial builds it, with hand-written recurrences: a GRUCell
encoder and a GRUCell decoder with additive (Bahdanau) attention stepped in Python loops over
24 positions each (hundreds of small kernels a step), teacher forcing, Adam, gradient clipping,
the loss read every 10 steps. The task: reverse a random token sequence. The loop issues many small
launches and little math: a launch-bound program. zero_grad() comes between the forward and the
backward pass, as in the tutorial (the gradients' blocks then drift from step to step);
ZERO_GRAD_AT=before calls it at the top of the loop."""
import os
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

VOCAB, EMBED, HIDDEN, LENGTH, BATCH = 32, 64, 128, 24, 64
BOS = 0
ZERO_FIRST = os.environ.get("ZERO_GRAD_AT", "between") == "before"


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMBED)
        self.encoder = nn.GRUCell(EMBED, HIDDEN)
        self.decoder = nn.GRUCell(EMBED + HIDDEN, HIDDEN)
        self.query = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.energy = nn.Linear(HIDDEN, 1, bias=False)
        self.out = nn.Linear(2 * HIDDEN, VOCAB)

    def forward(self, src, tgt_in):
        h = src.new_zeros(src.shape[0], HIDDEN, dtype=torch.float)
        states = []
        for t in range(src.shape[1]):
            h = self.encoder(self.embed(src[:, t]), h)
            states.append(h)
        memory = torch.stack(states, dim=1)
        keys = self.key(memory)
        logits = []
        for t in range(tgt_in.shape[1]):
            scores = self.energy(torch.tanh(self.query(h)[:, None] + keys)).squeeze(-1)
            context = torch.bmm(F.softmax(scores, dim=1)[:, None], memory).squeeze(1)
            h = self.decoder(torch.cat([self.embed(tgt_in[:, t]), context], dim=1), h)
            logits.append(self.out(torch.cat([h, context], dim=1)))
        return torch.stack(logits, dim=1)


model = Seq2Seq().cuda()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
g = torch.Generator(device="cuda").manual_seed(5)

mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    if ZERO_FIRST:
        opt.zero_grad()
    src = torch.randint(1, VOCAB, (BATCH, LENGTH), device="cuda", generator=g)
    tgt = src.flip(1)
    tgt_in = torch.cat([torch.full((BATCH, 1), BOS, device="cuda", dtype=src.dtype), tgt[:, :-1]], dim=1)
    logits = model(src, tgt_in)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))
    if not ZERO_FIRST:
        opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f}", flush=True)
    step_done(step, loss)
final_state(*model.parameters())
