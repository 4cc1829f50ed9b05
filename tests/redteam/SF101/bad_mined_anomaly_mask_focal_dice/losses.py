"""Focal and dice loss modules of the anomaly-segmentation case (a project module of losses)."""
import torch
import torch.nn as nn


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, logits, mask):
        prob = torch.softmax(logits, dim=1)[:, 1].clamp(1e-6, 1 - 1e-6)
        pt = torch.where(mask > 0.5, prob, 1 - prob)
        return (-(1 - pt) ** self.gamma * pt.log()).mean()


class DiceLoss(nn.Module):
    def forward(self, prob, mask):
        inter = (prob * mask).sum()
        return 1 - (2 * inter + 1) / (prob.sum() + mask.sum() + 1)
