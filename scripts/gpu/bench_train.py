"""A ResNet-18 training step (CIFAR-shaped batch 32, cross-entropy, SGD with momentum) under
`nimble bench`: RANGES profiler ranges of one step each; nimble records the last and replays it.
Checks that the weights after the bench equal the weights the recorded step produced (nimble
restores them). Prints one JSON line.
  PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync nimble bench --iteration 5 -- python3 scripts/gpu/bench_train.py
"""
import json
import os
import statistics
import time

import torch
import torchvision

ranges = int(os.environ.get("RANGES", "5"))
torch.backends.cudnn.benchmark = True
torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10).cuda().train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
x = torch.randn(32, 3, 32, 32, device="cuda")
target = torch.randint(0, 10, (32,), device="cuda")


def step():
    optimizer.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), target)
    loss.backward()
    optimizer.step()
    return loss


for _ in range(10):
    step()
torch.cuda.synchronize()
times = []
for _ in range(50):
    t = time.perf_counter()
    step().item()
    times.append((time.perf_counter() - t) * 1e3)
snapshot = None
for i in range(ranges):
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    loss = step()
    if i == ranges - 1:  # copies of the weights the recorded step produced (part of the iteration)
        snapshot = [p.detach().cpu() for p in model.parameters()]  # host copies: replay never writes host memory
    loss.item()
    torch.cuda.profiler.stop()
unchanged = all(torch.equal(p.cpu(), s) for p, s in zip(model.parameters(), snapshot))
print(json.dumps({"model": "resnet18-train-b32", "eager_ms": statistics.median(times),
                  "weights_restored": unchanged, "device": torch.cuda.get_device_name()}))
