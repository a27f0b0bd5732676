"""PyTorch's own CUDA graph (torch.cuda.graph) of a branchy CNN at batch 1, replayed with fresh
input; one replay is bracketed by cudaProfilerStart/Stop so `nimble record`/`nimble bench` see the
graph's nodes. MODEL=googlenet (default) or any torchvision model name."""
import os

import torch
import torchvision

torch.manual_seed(0)
name = os.environ.get("MODEL", "googlenet")
kwargs = {"aux_logits": False, "init_weights": False} if name in ("googlenet", "inception_v3") else {}
model = getattr(torchvision.models, name)(**kwargs).cuda().eval()
size = 299 if name == "inception_v3" else 224
static_x = torch.zeros(1, 3, size, size, device="cuda")
with torch.no_grad():
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)
for i in range(5):
    static_x.copy_(torch.randn(1, 3, size, size, device="cuda"))
    graph.replay()
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for i in range(100):
    graph.replay()
end.record()
torch.cuda.synchronize()
print(f"torch_graph_prog: {name} PyTorch CUDA graph replay {start.elapsed_time(end) / 100:.3f} ms")
torch.cuda.profiler.start()
graph.replay()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
print("torch_graph_prog: sum", float(static_y.sum()))
