"""Training with PyTorch Lightning, as its tutorials write it: a LightningModule around a
torchvision ResNet-18, AdamW with a per-step cosine schedule from configure_optimizers,
bf16-mixed precision, the loss logged to the progress bar every step, a DataLoader with two
persistent worker processes and pinned memory feeding shuffled in-memory images, a validation of
4 batches every 50 steps (and Lightning's sanity check before training), checkpoints saved by
Lightning's default ModelCheckpoint at each epoch's end. Lightning runs the loop; a callback
reads each step's loss (step_done)."""
import tempfile
from corpus_common import STEPS, step_begins, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import lightning as L
import torchvision


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = torchvision.models.resnet18(num_classes=10)
        self.loss_fn = torch.nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss_fn(self.model(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_acc", (self.model(x).argmax(1) == y).float().mean(), prog_bar=True)

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=1e-3, weight_decay=0.05)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=STEPS)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


class StepDigest(L.Callback):
    """What a script's own logging callback would do: read the loss after every step."""

    def __init__(self):
        self.step = 0

    def on_train_start(self, trainer, module):
        mark_loop_start()

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        step_begins(self.step)

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        step_done(self.step, outputs["loss"])
        self.step += 1


L.seed_everything(0)
images = torch.randn(2048, 3, 64, 64)  # 64 batches of 32 per epoch
labels = torch.randint(0, 10, (2048,))
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=32,
                                     shuffle=True, num_workers=2, persistent_workers=True, pin_memory=True)
val_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images[:128], labels[:128]),
                                         batch_size=32, num_workers=0)
trainer = L.Trainer(max_steps=STEPS, accelerator="gpu", devices=1, precision="bf16-mixed",
                    val_check_interval=50, limit_val_batches=4, logger=False,
                    default_root_dir=tempfile.mkdtemp(prefix="lightning-train-"), callbacks=[StepDigest()])
trainer.fit(Classifier(), loader, val_loader)
