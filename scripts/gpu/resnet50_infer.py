"""ResNet-50 batch-1 inference (torchvision, random weights): warm up, then bracket one forward
pass with torch.cuda.profiler.start()/stop() so `nimble record` (cudaProfilerApi) records it."""
import torch
import torchvision

torch.backends.cudnn.benchmark = True
model = torchvision.models.resnet50(weights=None).cuda().eval()
x = torch.randn(1, 3, 224, 224, device="cuda")
with torch.no_grad():
    for _ in range(5):
        model(x)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    y = model(x)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
print("resnet50_infer: output", tuple(y.shape), "checksum", float(y.sum()))
