"""Lightning module storing per-sample predictions keyed by dataset index in on_train_batch_end, detached on the device and never reset (bad)."""
import torch
import torch.nn.functional as F
import lightning as L


class NoisyLabelModel(L.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.sample_preds = {}

    def training_step(self, batch, batch_idx):
        x, y, idx = batch
        logits = self.net(x)
        self._last = (logits, idx)
        return F.cross_entropy(logits, y)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        logits, idx = self._last
        for i, p in zip(idx.tolist(), logits.softmax(-1).detach()):
            self.sample_preds[i] = p  # expect: SF102

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
