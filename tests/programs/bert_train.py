"""BERT (from a config, 4 layers) fine-tuning steps for sequence classification with AdamW."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
from transformers import BertConfig, BertForSequenceClassification

config = BertConfig(num_hidden_layers=4, hidden_size=256, num_attention_heads=4, intermediate_size=1024,
                    num_labels=3, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = BertForSequenceClassification(config).cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
for i in range(STEPS):
    ids = torch.randint(0, config.vocab_size, (8, 64), device="cuda", generator=g)
    labels = torch.randint(0, 3, (8,), device="cuda", generator=g)
    out = model(input_ids=ids, labels=labels)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    step_done(i, out.loss)
