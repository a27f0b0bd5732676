"""A program that captures its own CUDA graph (torch.cuda.graph) and replays it with fresh input
copied into the static buffer, plus a little eager work around it."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

model = torchvision.models.mobilenet_v2().cuda().eval()
static_x = torch.zeros(1, 3, 224, 224, device="cuda")
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
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
for i in range(STEPS):
    static_x.copy_(torch.randn(1, 3, 224, 224, device="cuda", generator=g))
    graph.replay()
    probs = torch.softmax(static_y, dim=1)
    step_done(i, probs)
