"""Lightning manual optimization: the output re-leafed before `manual_backward` (bad)."""
import pytorch_lightning as pl
import torch.nn.functional as F


class Regressor(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        pred = self.net(x).detach().requires_grad_(True)  # expect: SF409
        loss = F.l1_loss(pred, y)
        opt.zero_grad()
        self.manual_backward(loss)
        opt.step()
