"""GPT-2 built from a config (6 layers), forward passes on batches of token ids."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
from transformers import GPT2Config, GPT2LMHeadModel

config = GPT2Config(n_layer=6, n_head=12, n_embd=768, vocab_size=50257)
model = GPT2LMHeadModel(config).cuda().eval()
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
with torch.no_grad():
    for i in range(STEPS):
        ids = torch.randint(0, config.vocab_size, (2, 128), device="cuda", generator=g)
        logits = model(input_ids=ids).logits
        step_done(i, logits[:, -1])
