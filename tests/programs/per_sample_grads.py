"""Differentially private training (DP-SGD) as torch.func's tutorial computes it: per-sample
gradients by vmap(grad(loss)) through functional_call, each sample's gradient clipped to norm 1,
summed, Gaussian noise added (torch.normal with a generator) and the parameters updated by hand
with torch._foreach ops under no_grad; a small CNN on 28x28 images, the batch loss read every step."""
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
from torch.func import functional_call, grad, vmap
nn = torch.nn
F = torch.nn.functional

BATCH, CLASSES, CLIP, NOISE, LR = 64, 10, 1.0, 0.8, 0.05

model = nn.Sequential(
    nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, CLASSES)).cuda()
params = {name: p.detach() for name, p in model.named_parameters()}
names = list(params)


def sample_loss(params, image, label):
    logits = functional_call(model, params, (image[None],))
    return F.cross_entropy(logits, label[None])


per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))
g = torch.Generator(device="cuda").manual_seed(5)
mark_loop_start()
for i in range(STEPS):
    step_begins(i)
    images = torch.randn(BATCH, 1, 28, 28, device="cuda", generator=g)
    labels = torch.randint(0, CLASSES, (BATCH,), device="cuda", generator=g)
    grads = per_sample(params, images, labels)
    norms = torch.linalg.vector_norm(torch.stack([grads[n].reshape(BATCH, -1).norm(dim=1) for n in names]), dim=0)
    scale = (CLIP / (norms + 1e-6)).clamp(max=1.0)
    with torch.no_grad():
        summed = [torch.einsum("b,b...->...", scale, grads[n]) for n in names]
        noisy = [(s + torch.normal(0.0, NOISE * CLIP, s.shape, device="cuda", generator=g)) / BATCH for s in summed]
        torch._foreach_add_([params[n] for n in names], noisy, alpha=-LR)
        loss = F.cross_entropy(functional_call(model, params, (images,)), labels)
    step_done(i, loss)
final_state(*params.values())
