"""A word-level LSTM language model as PyTorch's word_language_model example writes it: an
embedding, a 2-layer LSTM (cuDNN's RNN) with dropout, a decoder; truncated backpropagation through
time over a token stream batchified on the GPU, the hidden state carried from one batch to the
next and detached; gradient clipping and a hand-written SGD update (p.data.add_), the loss read
every step."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()

VOCAB, EMB, HIDDEN, LAYERS, BPTT, BATCH, LR = 10000, 400, 400, 2, 35, 20, 20.0


class RNNModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.2)
        self.encoder = torch.nn.Embedding(VOCAB, EMB)
        self.rnn = torch.nn.LSTM(EMB, HIDDEN, LAYERS, dropout=0.2)
        self.decoder = torch.nn.Linear(HIDDEN, VOCAB)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.drop(self.encoder(x)), hidden)
        return self.decoder(self.drop(out)).view(-1, VOCAB), hidden

    def init_hidden(self):
        weight = next(self.parameters())
        return (weight.new_zeros(LAYERS, BATCH, HIDDEN), weight.new_zeros(LAYERS, BATCH, HIDDEN))


def batchify(stream):
    n = stream.size(0) // BATCH
    return stream[:n * BATCH].view(BATCH, -1).t().contiguous().cuda()


model = RNNModel().cuda()
criterion = torch.nn.NLLLoss()
data = batchify(torch.randint(0, VOCAB, (BPTT * 100 * BATCH + BATCH,)))
hidden = model.init_hidden()
mark_loop_start()
for step in range(STEPS):
    model.train()
    i = (step * BPTT) % (data.size(0) - 1 - BPTT)
    x, y = data[i:i + BPTT], data[i + 1:i + 1 + BPTT].reshape(-1)
    hidden = tuple(h.detach() for h in hidden)
    model.zero_grad()
    out, hidden = model(x, hidden)
    loss = criterion(torch.nn.functional.log_softmax(out, dim=1), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-LR)
    step_done(step, loss)
