"""Mined shape: a Lightning training_step checks the loss for NaN and then for Inf, two host syncs on every step (bad)."""
import torch
import pytorch_lightning as pl


class ImitationPolicy(pl.LightningModule):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.loss_fn = torch.nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        logits = self.net(batch["states"].cuda())
        loss = self.loss_fn(logits, batch["actions"].cuda())
        if torch.isnan(loss).any():  # expect: SF202
            raise ValueError("NaNs detected in the loss")
        if (loss.abs() == torch.inf).any():  # expect: SF202
            raise ValueError("Infs detected in the loss")
        self.log("train_loss", loss, on_epoch=True, on_step=False)
        return loss
