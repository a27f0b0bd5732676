"""An inference service's loop as people write it: a BERT-style encoder (built from a
transformers BertConfig, eval mode, fp16, torch.inference_mode) answering batches of requests
whose lengths are padded to the next of three buckets (64, 128, 256 tokens), the bucket of each
batch drawn at random as traffic comes (seeded), an attention mask for the padding, the [CLS]
vector through a classifier head, and the predicted labels copied to the host for every batch."""
import random

from corpus_common import STEPS, step_begins, step_done, mark_loop_start, torch_setup
torch = torch_setup()
from transformers import BertConfig, BertModel

BATCH, BUCKETS, LABELS = 16, (64, 128, 256), 7

config = BertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=6, intermediate_size=1536,
                    vocab_size=30522, max_position_embeddings=512)
encoder = BertModel(config).cuda().half().eval()
head = torch.nn.Linear(config.hidden_size, LABELS).cuda().half().eval()
traffic = random.Random(17)
g = torch.Generator(device="cuda").manual_seed(7)

mark_loop_start()
with torch.inference_mode():
    for step in range(STEPS):
        step_begins(step)
        length = traffic.choice(BUCKETS)
        real = torch.randint(length // 2, length + 1, (BATCH,), device="cuda", generator=g)
        tokens = torch.randint(1000, config.vocab_size, (BATCH, length), device="cuda", generator=g)
        mask = (torch.arange(length, device="cuda")[None, :] < real[:, None]).long()
        tokens = tokens * mask
        cls = encoder(input_ids=tokens, attention_mask=mask).last_hidden_state[:, 0]
        labels = head(cls).argmax(dim=1).cpu()
        step_done(step, labels)
