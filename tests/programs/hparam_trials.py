"""A hyper-parameter search run in one process, as sweep scripts (and Optuna objectives) write
it: four trials one after another, each building its model afresh on the CPU and moving it to
the GPU (widths 96, 128, 64, 128: the last repeats the second's shapes with new parameters),
AdamW with a one-cycle schedule, zero_grad(set_to_none=True) at the top of the loop, a
two-batch validation every 20 steps whose accuracy is read, the best accuracy kept, and the
trial's model and optimiser deleted and PyTorch's cache emptied before the next trial (the
memory earlier trials' kernels used is freed back to the driver). STEPS counts the steps of all
trials together."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn
F = torch.nn.functional

WIDTHS = (96, 128, 64, 128)
BATCH, CLASSES, SIZE = 64, 10, 32


def make_model(width):
    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))
    return nn.Sequential(block(3, width), block(width, width), nn.MaxPool2d(2),
                         block(width, 2 * width), block(2 * width, 2 * width), nn.MaxPool2d(2),
                         block(2 * width, 4 * width), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Dropout(0.1), nn.Linear(4 * width, CLASSES))


g = torch.Generator(device="cuda").manual_seed(11)
centers = torch.randn(CLASSES, 3, SIZE, SIZE, device="cuda", generator=g)


def batch():
    labels = torch.randint(0, CLASSES, (BATCH,), device="cuda", generator=g)
    images = centers[labels] + 0.8 * torch.randn(BATCH, 3, SIZE, SIZE, device="cuda", generator=g)
    return images, labels


val = [batch() for _ in range(2)]
per_trial = max(STEPS // len(WIDTHS), 1)
step = 0
results = []
mark_loop_start()
for trial, width in enumerate(WIDTHS):
    torch.manual_seed(100 + trial)
    model = make_model(width).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=4e-3, total_steps=per_trial)
    best = 0.0
    for i in range(per_trial):
        if step >= STEPS:
            break
        step_begins(step)
        opt.zero_grad(set_to_none=True)
        images, labels = batch()
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        opt.step()
        sched.step()
        if (i + 1) % 20 == 0:
            model.eval()
            with torch.no_grad():
                hits = sum((model(x).argmax(1) == y).sum().item() for x, y in val)
            model.train()
            best = max(best, hits / (2 * BATCH))
        step_done(step, loss)
        step += 1
    results.append((width, best))
    print(f"trial {trial}: width {width}, best validation accuracy {best:.3f}", flush=True)
    if trial < len(WIDTHS) - 1:
        del model, opt, sched
        torch.cuda.empty_cache()
final_state(*model.parameters())
