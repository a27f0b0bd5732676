"""A model trained by Hugging Face's Trainer, as its tutorials do: BERT for sequence
classification from a config (default dropout), a Dataset of tokenised examples, TrainingArguments
with bf16, AdamW and a linear schedule (Trainer's defaults), gradient clipping, pinned DataLoader
memory, the loss logged every step. Trainer runs the loop; a callback reports each logged loss."""
import sys

from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
try:
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainerCallback, TrainingArguments
    import accelerate  # noqa: F401  (Trainer needs it)
except ImportError as e:
    print("hf_trainer.py: needs transformers' Trainer and accelerate:", e)
    sys.exit(3)

BATCH, SEQ = 16, 64


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n):
        g = torch.Generator().manual_seed(4)
        self.ids = torch.randint(0, 5000, (n, SEQ), generator=g)
        self.labels = torch.randint(0, 3, (n,), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones(SEQ, dtype=torch.long), "labels": self.labels[i]}


class Report(TrainerCallback):
    def on_train_begin(self, args, state, control, **kwargs):
        mark_loop_start()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "loss" in logs:
            step_done(state.global_step - 1, logs["loss"])


config = BertConfig(vocab_size=5000, num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                    intermediate_size=1024, num_labels=3)
model = BertForSequenceClassification(config)
args = TrainingArguments(output_dir="/tmp/nimble-hf-trainer", max_steps=STEPS, per_device_train_batch_size=BATCH,
                         learning_rate=5e-5, warmup_steps=5, logging_steps=1, bf16=True, save_strategy="no",
                         report_to=[], dataloader_pin_memory=True, seed=0, data_seed=0, disable_tqdm=True,
                         full_determinism=False)
Trainer(model=model, args=args, train_dataset=Tokens(BATCH * STEPS), callbacks=[Report()]).train()
