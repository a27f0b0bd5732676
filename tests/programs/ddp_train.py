"""DistributedDataParallel training as torchrun starts it: one process per GPU, NCCL all-reduces
of the gradients on NCCL's own stream. CIFAR-shaped batches of 64 per rank, SGD with momentum.
Without torchrun (RANK unset) the environment of one rank is filled in, so the script also runs
plainly; with one rank NCCL launches no kernel (its all-reduce is a copy).

    python3 ddp_train.py [resnet18|resnet50]
    torchrun --standalone --nproc_per_node 2 ddp_train.py resnet50
"""
import os
import sys
os.environ.setdefault("RANK", "0")
os.environ.setdefault("WORLD_SIZE", "1")
os.environ.setdefault("LOCAL_RANK", "0")
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29511")
from corpus_common import STEPS, step_done, final_state, mark_loop_start, torch_setup
torch = torch_setup()
import torch.distributed as dist
import torchvision

arch = sys.argv[1] if len(sys.argv) > 1 else "resnet18"
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
model = torch.nn.parallel.DistributedDataParallel(getattr(torchvision.models, arch)(num_classes=10).cuda())
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
final_state(*model.parameters())
dist.destroy_process_group()
