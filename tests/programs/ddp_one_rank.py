"""DistributedDataParallel training as torchrun starts it, with one rank (NCCL still runs its
all-reduce kernels on its own stream): the environment torchrun would set is filled in when
absent, so the script runs plainly too."""
import os
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
os.environ.setdefault("LOCAL_RANK", "0")
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29511")
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torch.distributed as dist
import torchvision

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = torch.nn.parallel.DistributedDataParallel(torchvision.models.resnet18(num_classes=10).cuda())
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
g = torch.Generator().manual_seed(int(os.environ["RANK"]))
batches = [(torch.randn(64, 3, 32, 32, generator=g), torch.randint(0, 10, (64,), generator=g)) for _ in range(4)]
mark_loop_start()
for i in range(STEPS):
    x, y = batches[i % len(batches)]
    x, y = x.cuda(), y.cuda()
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    step_done(i, loss)
dist.destroy_process_group()
