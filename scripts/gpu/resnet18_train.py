"""One ResNet-18 training step on CIFAR-shaped data (batch 32, 10 classes, cross-entropy, SGD with
momentum), bracketed with torch.cuda.profiler.start()/stop() after warm-up steps."""
import torch
import torchvision

torch.backends.cudnn.benchmark = True
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
    return loss.item()  # the host sync that ends an iteration


for _ in range(5):
    step()
torch.cuda.synchronize()
# NVTX_RANGE=name also marks the step as an NVTX range (for --capture-range nvtx:name).
nvtx_range = __import__("os").environ.get("NVTX_RANGE")
if nvtx_range:
    torch.cuda.nvtx.range_push(nvtx_range)
torch.cuda.profiler.start()
loss = step()
torch.cuda.profiler.stop()
if nvtx_range:
    torch.cuda.nvtx.range_pop()
print("resnet18_train: loss", loss)
