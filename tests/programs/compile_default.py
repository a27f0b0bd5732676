"""torch.compile (default mode) of a ResNet-18 for inference: Triton kernels launched eagerly."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

model = torchvision.models.resnet18().cuda().eval()
compiled = torch.compile(model)
g = torch.Generator(device="cuda").manual_seed(1)
mark_loop_start()
with torch.no_grad():
    for i in range(STEPS):
        x = torch.randn(1, 3, 224, 224, device="cuda", generator=g)
        step_done(i, compiled(x))
