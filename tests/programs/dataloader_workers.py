"""Training fed by a DataLoader as most image scripts are: a Dataset that decodes and augments
each sample on the CPU (random crop and flip), two worker processes, pin_memory=True (the loader's
pinning thread allocates and fills page-locked buffers while the main thread launches), a shuffled
order from a seeded generator, a short last batch every epoch, `.to("cuda", non_blocking=True)`,
ResNet-18 in channels_last with SGD (Nesterov), label smoothing, OneCycleLR and gradient clipping.
One corpus step is one optimizer step."""
import numpy as np

from corpus_common import STEPS, step_done, mark_loop_start, torch_setup, final_state
torch = torch_setup()
import torchvision

SAMPLES, BATCH = 700, 64  # 10 batches of 64 and a last batch of 60 per epoch


class Augmented(torch.utils.data.Dataset):
    """32x32 images stored as uint8 at 40x40, cropped and flipped per sample (the crop drawn from
    the sample's index, so every run and every worker draws the same)."""

    def __init__(self):
        rng = np.random.default_rng(0)
        self.images = rng.integers(0, 256, (SAMPLES, 40, 40, 3), dtype=np.uint8)
        self.labels = rng.integers(0, 10, SAMPLES)
        self.mean = np.array([125.3, 123.0, 113.9], dtype=np.float32)
        self.std = np.array([63.0, 62.1, 66.7], dtype=np.float32)

    def __len__(self):
        return SAMPLES

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        top, left = rng.integers(0, 9, 2)
        img = self.images[i, top:top + 32, left:left + 32]
        if rng.random() < 0.5:
            img = img[:, ::-1]
        img = (img.astype(np.float32) - self.mean) / self.std
        return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))), int(self.labels[i])


loader = torch.utils.data.DataLoader(Augmented(), batch_size=BATCH, shuffle=True, num_workers=2,
                                     pin_memory=True, generator=torch.Generator().manual_seed(2))
model = torchvision.models.resnet18(num_classes=10).cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=STEPS + 1)
loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.1)
step = 0
mark_loop_start()
while step < STEPS:
    model.train()
    for x, y in loader:
        x = x.to("cuda", non_blocking=True).to(memory_format=torch.channels_last)
        y = y.to("cuda", non_blocking=True)
        loss = loss_fn(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        step_done(step, loss)
        step += 1
        if step == STEPS:
            break
final_state(*model.parameters())
