"""Training profiled for a few steps in the middle, as PyTorch's profiler recipe has it: ResNet-18,
SGD with momentum, torch.profiler with a schedule (wait 20 steps, warm up 2, record 3), the
profiler stepped every iteration, its table built when the window is ready.

The profile is a result too: under nimble run it must still see the GPU's work. The program
exits 1 when the recorded steps hold no CUDA kernel (a profiler whose CUPTI was taken, or whose
kernels vanished into launches it cannot see), and prints a PROFILE line with what it saw."""
import json

from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision
from torch.profiler import ProfilerActivity, profile, schedule

model = torchvision.models.resnet18(num_classes=100).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
loss_fn = torch.nn.CrossEntropyLoss()
g = torch.Generator(device="cuda").manual_seed(5)
seen = {}


def on_ready(prof):
    kernels = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
    seen["kernel_names"] = len(kernels)
    seen["names"] = sorted(e.key[:80] for e in kernels)
    seen["kernel_calls"] = sum(e.count for e in kernels)
    seen["device_ms"] = round(sum(e.self_device_time_total for e in kernels) / 1e3, 3)


prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
               schedule=schedule(wait=20, warmup=2, active=3, repeat=1), on_trace_ready=on_ready)
mark_loop_start()
prof.start()
for i in range(STEPS):
    images = torch.randn(16, 3, 224, 224, device="cuda", generator=g)
    labels = torch.randint(0, 100, (16,), device="cuda", generator=g)
    loss = loss_fn(model(images), labels)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    prof.step()
    step_done(i, loss)
prof.stop()

print("PROFILE " + json.dumps(seen), flush=True)
if STEPS >= 25 and not seen.get("kernel_calls"):
    raise SystemExit("profiled_train.py: the profiler recorded steps 22-24 but saw no CUDA kernel in them: %s" % seen)
