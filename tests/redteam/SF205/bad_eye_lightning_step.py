"""A Lightning training_step regularising toward the identity, built on the host each step (aliased torch)."""
import lightning.pytorch as pl
import torch as T


class Whitening(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        z = self.encoder(batch)
        cov = z.T @ z / z.size(0)
        target = T.eye(cov.size(0)).cuda()  # expect: SF205
        return (cov - target).pow(2).sum()
