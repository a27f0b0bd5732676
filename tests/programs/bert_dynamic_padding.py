"""BERT fine-tuning on sentences of varying length, batched with dynamic padding the way
transformers' DataCollatorWithPadding(pad_to_multiple_of=8) does: each batch is padded to its
longest sentence, so the sequence length, and with it every kernel's shape, changes from batch to
batch. Sentence lengths follow a long-tailed distribution (median about 33 tokens, as in GLUE-like
data); AdamW, a linear schedule with warm-up, gradient clipping, the loss read every step."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
from transformers import BertConfig, BertForSequenceClassification, get_linear_schedule_with_warmup

BATCH = 16
config = BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4, intermediate_size=1024,
                    num_labels=2)
model = BertForSequenceClassification(config).cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=3e-5, weight_decay=0.01)
sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=10, num_training_steps=STEPS)
rng = torch.Generator().manual_seed(2)
lengths = torch.empty(STEPS * BATCH).log_normal_(3.5, 0.6, generator=rng).long().clamp(8, 256)
sentences = [torch.randint(1000, config.vocab_size, (int(n),), generator=rng) for n in lengths]
sentence_labels = torch.randint(0, 2, (STEPS * BATCH,), generator=rng)


def collate(batch):
    """Pads to the longest sentence, rounded up to a multiple of 8."""
    longest = -(-max(len(s) for s in batch) // 8) * 8
    ids = torch.zeros(len(batch), longest, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, s in enumerate(batch):
        ids[i, :len(s)] = s
        mask[i, :len(s)] = 1
    return ids, mask


mark_loop_start()
for step in range(STEPS):
    ids, mask = collate(sentences[step * BATCH:(step + 1) * BATCH])
    y = sentence_labels[step * BATCH:(step + 1) * BATCH]
    out = model(input_ids=ids.cuda(), attention_mask=mask.cuda(), labels=y.cuda())
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad()
    step_done(step, out.loss)
