"""Trainer that fills the missing style reference with the source (`batch["style_ref"] = batch["src"]`) and then computes style and content losses (bad)."""
import torch


class LatentStyleTrainer:
    def __init__(self, model, swd_loss, ssm_loss, optimizer):
        self.model = model
        self.swd_loss = swd_loss
        self.ssm_loss = ssm_loss
        self.optimizer = optimizer

    def train_step(self, batch):
        batch["style_ref"] = batch["src"]
        x1 = self.model(batch["src"])
        loss = self.swd_loss(x1, batch["style_ref"]) + self.ssm_loss(x1, batch["src"])  # expect: SF401
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()
