"""Training written as PyTorch's ImageNet example (pytorch/examples, imagenet/main.py) writes its
train loop: compute the output and the loss, measure top-1/top-5 accuracy, update AverageMeters
with loss.item() every step, then optimizer.zero_grad(); loss.backward(); optimizer.step() (so the
gradients are freed between the forward and the backward pass), SGD with momentum and weight
decay, a StepLR stepped every epoch, a progress line every 10 steps. ResNet-18 on random
64x64 images (a fixed synthetic set picked by a shuffled index, batches of 64, 8 per epoch).
ZERO_GRAD_AT=before calls optimizer.zero_grad() before the forward pass instead (the gradients'
blocks then stay in place: scripts/gpu/alloc_drift.py). NORM=group puts GroupNorm where the model
has batch norm (no cuDNN batch-norm kernels, whose counters live in page-locked host memory)."""
import os

from corpus_common import STEPS, step_done, mark_loop_start, torch_setup, final_state
torch = torch_setup()
import torchvision

BATCH, BATCHES_PER_EPOCH = 64, 8
ZERO_FIRST = os.environ.get("ZERO_GRAD_AT", "between") == "before"


class AverageMeter:
    """Computes and stores the average and current value (as the example's)."""

    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    """The precision@k for the specified values of k, as the example computes it."""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


norm = (lambda channels: torch.nn.GroupNorm(32, channels)) if os.environ.get("NORM") == "group" else None
model = torchvision.models.resnet18(num_classes=100, norm_layer=norm).cuda()
criterion = torch.nn.CrossEntropyLoss().cuda()
optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
images_all = torch.randn(BATCH * BATCHES_PER_EPOCH, 3, 64, 64, device="cuda")
targets_all = torch.randint(0, 100, (BATCH * BATCHES_PER_EPOCH,), device="cuda")
g = torch.Generator(device="cuda").manual_seed(0)

mark_loop_start()
step = 0
epoch = 0
while step < STEPS:
    losses, top1, top5 = AverageMeter(), AverageMeter(), AverageMeter()
    model.train()
    order = torch.randperm(images_all.size(0), device="cuda", generator=g)
    for i in range(BATCHES_PER_EPOCH):
        if step >= STEPS:
            break
        idx = order[i * BATCH:(i + 1) * BATCH]
        images, target = images_all[idx], targets_all[idx]
        if ZERO_FIRST:
            optimizer.zero_grad()
        output = model(images)
        loss = criterion(output, target)
        acc1, acc5 = accuracy(output, target, topk=(1, 5))
        losses.update(loss.item(), images.size(0))
        top1.update(acc1[0], images.size(0))
        top5.update(acc5[0], images.size(0))
        if not ZERO_FIRST:
            optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if i % 10 == 0:
            print(f"Epoch: [{epoch}][{i}/{BATCHES_PER_EPOCH}] Loss {losses.val:.4e} ({losses.avg:.4e})", flush=True)
        step_done(step, loss)
        step += 1
    scheduler.step()
    epoch += 1
final_state(*model.parameters())
