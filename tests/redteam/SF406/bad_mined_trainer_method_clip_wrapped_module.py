"""Mined (audio separation trainer): a trainer method steps, then clips the DataParallel's inner module's gradients."""
import torch


class SeparationTrainer:
    def __init__(self, model, optimizer, loss_fn):
        self.model = model
        self.optimizer = optimizer
        self.loss_fn = loss_fn

    def _train_batch(self, mixture, sources):
        self.optimizer.zero_grad()
        estimate = self.model.module(mixture)
        loss = self.loss_fn(estimate, sources)
        loss.backward()
        self.optimizer.step()
        torch.nn.utils.clip_grad_norm_(self.model.module.parameters(), max_norm=5)  # expect: SF406
        return loss
