"""Lightning manual optimization: torch's clip after `opt.step()`."""
import torch
import pytorch_lightning as pl


class LM(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters())

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        self.manual_backward(self(batch))
        opt.step()
        torch.nn.utils.clip_grad_norm_(self.parameters(), 1.0)  # expect: SF406
