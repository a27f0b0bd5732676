"""A model deployed through TorchScript, as serving code did before torch.compile: scripted, frozen
and optimized for inference (torch.jit.freeze, torch.jit.optimize_for_inference). The profiling
executor runs the first calls unoptimized, then specializes the graph; its fuser may compile
elementwise chains at run time (NVRTC, modules loaded and launched through the driver). A
transformer-style feed-forward stack with hand-written GELU and RMS norm (elementwise chains a fuser
takes), batch 32 x 128 tokens, fp16."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()


class Block(torch.nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)
        self.scale = torch.nn.Parameter(torch.ones(width))

    def forward(self, x):
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.scale
        h = self.up(normed)
        h = 0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
        return x + self.down(h)


class Stack(torch.nn.Module):
    def __init__(self, width: int, depth: int):
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(width) for _ in range(depth)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


model = Stack(512, 6).cuda().half().eval()
scripted = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(model)))
g = torch.Generator(device="cuda").manual_seed(13)
mark_loop_start()
with torch.no_grad():
    for i in range(STEPS):
        x = torch.randn(32, 128, 512, device="cuda", generator=g).half()
        step_done(i, scripted(x))
