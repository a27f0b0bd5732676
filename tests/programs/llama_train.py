"""Training a small Llama-style language model the way current LLM recipes do: the model from a
LlamaConfig (RMSNorm, rotary embeddings, SwiGLU, grouped-query attention through PyTorch's
scaled_dot_product_attention), TF32 matmuls, bf16 autocast, fused AdamW with betas (0.9, 0.95)
and weight decay, a cosine schedule with warm-up from transformers, gradient clipping, each
step's token batch drawn on the GPU from a seeded generator, the loss and the gradient norm read
every step (as a training log prints them)."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup, final_state
torch = torch_setup()
from transformers import LlamaConfig, LlamaForCausalLM, get_cosine_schedule_with_warmup

torch.backends.cuda.matmul.allow_tf32 = True
SEQ, BATCH = 256, 8
config = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=6, num_attention_heads=8,
                     num_key_value_heads=2, vocab_size=16000, max_position_embeddings=SEQ)
model = LlamaForCausalLM(config).cuda()
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
sched = get_cosine_schedule_with_warmup(opt, num_warmup_steps=20, num_training_steps=STEPS)
tokens = torch.Generator(device="cuda").manual_seed(5)
mark_loop_start()
for step in range(STEPS):
    ids = torch.randint(0, config.vocab_size, (BATCH, SEQ), device="cuda", generator=tokens)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    step_done(step, loss, grad_norm)
final_state(*model.parameters())
