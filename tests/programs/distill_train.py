"""Knowledge distillation as its scripts write it: a torchvision ResNet-50 teacher (frozen, eval
mode, torch.no_grad, channels-last) and a ResNet-18 student trained under bf16 autocast on the
teacher's softened outputs (KL divergence at temperature 4, times T^2) mixed with the labels'
cross-entropy, label smoothing, SGD with Nesterov momentum and weight decay, a cosine schedule
stepped every step, zero_grad() at the top of the loop, the student's train/eval switch for a
two-batch validation every 25 steps, and the loss read every 10 steps."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
import torchvision
F = torch.nn.functional

BATCH, T, ALPHA = 32, 4.0, 0.7

teacher = torchvision.models.resnet50(num_classes=100).cuda().to(memory_format=torch.channels_last).eval()
for p in teacher.parameters():
    p.requires_grad_(False)
student = torchvision.models.resnet18(num_classes=100).cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=5e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(STEPS, 1))
g = torch.Generator(device="cuda").manual_seed(3)
val_images = [torch.rand(BATCH, 3, 96, 96, device="cuda", generator=g).to(memory_format=torch.channels_last)
              for _ in range(2)]
val_labels = [torch.randint(0, 100, (BATCH,), device="cuda", generator=g) for _ in range(2)]

mark_loop_start()
for step in range(STEPS):
    step_begins(step)
    opt.zero_grad()
    images = torch.rand(BATCH, 3, 96, 96, device="cuda", generator=g).to(memory_format=torch.channels_last)
    labels = torch.randint(0, 100, (BATCH,), device="cuda", generator=g)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        with torch.no_grad():
            soft_targets = F.softmax(teacher(images).float() / T, dim=1)
        logits = student(images).float()
    distill = F.kl_div(F.log_softmax(logits / T, dim=1), soft_targets, reduction="batchmean") * T * T
    loss = ALPHA * distill + (1 - ALPHA) * F.cross_entropy(logits, labels, label_smoothing=0.1)
    loss.backward()
    opt.step()
    sched.step()
    if step % 10 == 0:
        print(f"step {step}: loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.4f}", flush=True)
    if (step + 1) % 25 == 0:
        student.eval()
        hits = 0
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for images_b, labels_b in zip(val_images, val_labels):
                hits += (student(images_b).argmax(dim=1) == labels_b).sum().item()
        student.train()
        print(f"step {step + 1}: validation top-1 {hits / (2 * BATCH):.3f}", flush=True)
    step_done(step, loss)
final_state(*student.parameters())
