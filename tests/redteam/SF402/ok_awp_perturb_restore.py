"""Adversarial weight perturbation: weights are perturbed along the adversarial gradient and restored from a backup before the optimizer step (legitimate)."""
import torch


class AWP:
    def __init__(self, model, adv_lr=1e-3):
        self.model, self.adv_lr, self.backup = model, adv_lr, {}

    def perturb(self):
        for name, p in self.model.named_parameters():
            if p.requires_grad and p.grad is not None:
                self.backup[name] = p.data.clone()
                p.data.add_(self.adv_lr * p.grad / (p.grad.norm() + 1e-12) * p.data.norm())

    def restore(self):
        for name, p in self.model.named_parameters():
            if name in self.backup:
                p.data = self.backup[name]
        self.backup = {}


def train_step(model, optimizer, awp, loss_fn, x, y):
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    awp.perturb()
    loss_fn(model(x), y).backward()
    awp.restore()
    optimizer.step()
