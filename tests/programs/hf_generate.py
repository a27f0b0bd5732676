"""Greedy generation with a KV cache (GPT-2 from a config): each call decodes 16 tokens."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, torch_setup
torch = torch_setup()
from transformers import GPT2Config, GPT2LMHeadModel

config = GPT2Config(n_layer=4, n_head=8, n_embd=512)
model = GPT2LMHeadModel(config).cuda().eval()
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
with torch.no_grad():
    for i in range(STEPS // 4):
        step_begins(i)
        prompt = torch.randint(0, config.vocab_size, (1, 32), device="cuda", generator=g)
        out = model.generate(prompt, max_new_tokens=16, do_sample=False, pad_token_id=0,
                             attention_mask=torch.ones_like(prompt))
        step_done(i, out)
