"""A learning-rate sweep as people write one: torch.multiprocessing.spawn starts a worker process per
rate, each trains ResNet-18 on the one GPU and prints a line with a digest of its losses (read every
step with .item()). The workers have no RANK variable: under one `nimble run -o`, each must still
write its own trace and summary, and each worker's losses must be what a plain run's are.

    STEPS=60 python3 spawn_sweep.py      # prints "WORKER i lr=... digest=... steps=... median_ms=..."
"""
import hashlib
import os
import statistics
import struct
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch
import torch.multiprocessing as mp

STEPS = int(os.environ.get("STEPS", "60"))
RATES = (0.05, 0.01)


def worker(index, rates):
    import torchvision
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=rates[index], momentum=0.9)
    g = torch.Generator(device="cuda").manual_seed(1)
    losses, times = [], []
    for step in range(STEPS):
        begin = time.perf_counter()
        images = torch.randn(32, 3, 64, 64, device="cuda", generator=g)
        labels = torch.randint(0, 10, (32,), device="cuda", generator=g)
        loss = torch.nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        times.append((time.perf_counter() - begin) * 1e3)
    digest = hashlib.sha256(struct.pack("%dd" % len(losses), *losses)).hexdigest()[:16]
    print("WORKER %d lr=%g digest=%s steps=%d median_ms=%.3f" %
          (index, rates[index], digest, len(losses), statistics.median(times[len(times) // 2:])), flush=True)


if __name__ == "__main__":
    mp.spawn(worker, args=(RATES,), nprocs=len(RATES), join=True)
