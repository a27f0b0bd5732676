"""Fine-tuning a GPT-2 language model as the Hugging Face examples do: the model from a config
(6 layers) with its default dropout (0.1: every step draws new masks), gradient checkpointing
(the backward pass recomputes each block, replaying its dropout masks), bf16 autocast, fused
AdamW, a linear warm-up schedule from transformers, gradient clipping, token batches copied from
pinned memory with non_blocking, the loss read every step."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup, final_state
torch = torch_setup()
from transformers import GPT2Config, GPT2LMHeadModel, get_linear_schedule_with_warmup

SEQ, BATCH = 128, 8
config = GPT2Config(n_layer=6, n_embd=384, n_head=6, n_positions=SEQ, vocab_size=8000)
model = GPT2LMHeadModel(config).cuda()
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
model.config.use_cache = False
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01, fused=True)
sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=10, num_training_steps=STEPS)
data = torch.randint(0, config.vocab_size, (16, BATCH, SEQ), generator=torch.Generator().manual_seed(3)).pin_memory()
mark_loop_start()
for step in range(STEPS):
    ids = data[step % len(data)].to("cuda", non_blocking=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    step_done(step, loss)
final_state(*model.parameters())
