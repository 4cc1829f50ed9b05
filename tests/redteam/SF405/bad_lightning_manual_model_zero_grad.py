"""Lightning manual optimization: the module's own gradients are cleared after manual_backward."""
import torch
import lightning as L


class Net(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        loss = self(batch)
        self.manual_backward(loss)
        opt.zero_grad()  # expect: SF405
        opt.step()
