"""Mined (NVIDIA/apex#1052, a relation-extraction model under apex/torch mixed precision): path scores masked with -1e9 crash with "value cannot be converted to type at::Half"."""
import torch
import torch.nn as nn


class PathReasoner(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, paths, path_mask):
        scores = self.score(paths).squeeze(-1)
        scores_mask = scores.masked_fill(~path_mask, -1e9)  # expect: SF306
        weights = torch.softmax(scores_mask, dim=-1)
        return (weights.unsqueeze(-1) * paths).sum(1)


def train_epoch(model, loader, optimizer, scaler):
    for paths, mask, label in loader:
        with torch.cuda.amp.autocast():
            loss = nn.functional.binary_cross_entropy_with_logits(model(paths, mask).sum(-1), label)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
