"""Epochs over a small in-memory dataset with a short last batch, SGD with momentum, and an eval
pass (model.eval(), no_grad) after every epoch, as most training scripts are written."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import torchvision

torch.manual_seed(0)
data = torch.randn(330, 3, 32, 32)       # 10 batches of 32 and a last batch of 10
labels = torch.randint(0, 10, (330,))
val = torch.randn(128, 3, 32, 32)
val_labels = torch.randint(0, 10, (128,))
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data, labels), batch_size=32)
val_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(val, val_labels), batch_size=32)
model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
step = 0
mark_loop_start()
for epoch in range(max(1, STEPS // 15)):
    model.train()
    for x, y in train_loader:
        x, y = x.cuda(), y.cuda()
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        step_done(step, loss)
        step += 1
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in val_loader:
            correct += (model(x.cuda()).argmax(1) == y.cuda()).sum().item()
    step_done(step, correct)
    step += 1
