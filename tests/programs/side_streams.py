"""Training with the next batch copied in on a side stream while the current one trains (the
usual prefetcher), and an EMA of the weights updated in a `torch.cuda.stream` block, as scripts
with a data prefetcher and model averaging do. Several streams, ordered by the program's events."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

model = torchvision.models.resnet18(num_classes=10).cuda()
ema = [p.detach().clone() for p in model.parameters()]
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
host = [(torch.randn(32, 3, 32, 32).pin_memory(), torch.randint(0, 10, (32,)).pin_memory()) for _ in range(4)]
copy_stream = torch.cuda.Stream()
ema_stream = torch.cuda.Stream()


def prefetch(i):
    with torch.cuda.stream(copy_stream):
        x, y = host[i % len(host)]
        return x.cuda(non_blocking=True), y.cuda(non_blocking=True)


nxt = prefetch(0)
mark_loop_start()
for i in range(STEPS):
    torch.cuda.current_stream().wait_stream(copy_stream)
    x, y = nxt
    x.record_stream(torch.cuda.current_stream())
    y.record_stream(torch.cuda.current_stream())
    nxt = prefetch(i + 1)
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    ema_stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(ema_stream), torch.no_grad():
        for e, p in zip(ema, model.parameters()):
            e.mul_(0.99).add_(p.detach(), alpha=0.01)
    torch.cuda.current_stream().wait_stream(ema_stream)
    step_done(i, loss, ema[0])
