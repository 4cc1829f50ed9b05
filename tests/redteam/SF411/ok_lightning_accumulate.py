"""Lightning accumulates (and scales) with `accumulate_grad_batches`; training_step returns the loss (correct)."""
import pytorch_lightning as pl
import torch.nn.functional as F


class LitModel(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)


trainer = pl.Trainer(accumulate_grad_batches=4)
trainer.fit(LitModel(), loader)
