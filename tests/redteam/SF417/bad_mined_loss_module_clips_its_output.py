"""Mined (weighted classification loss): the loss module's forward clips its own result tensor."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PenalisedCE(nn.Module):
    def __init__(self, penalty):
        super().__init__()
        self.penalty = penalty

    def forward(self, logits, labels, weights):
        per_item = F.cross_entropy(logits, labels, reduction="none")
        total_loss = per_item * weights + self.penalty
        torch.nn.utils.clip_grad_norm_(total_loss, max_norm=1.0)  # expect: SF417
        return total_loss.mean()
