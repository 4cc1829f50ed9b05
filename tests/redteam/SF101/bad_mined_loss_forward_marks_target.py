"""Mined shape: a Dice loss module's forward casts its own target to float and sets `.requires_grad = True` on it
before comparing masks; the training loop feeds the labels through it as the loss target (bad)."""
import torch
import torch.nn as nn


class SoftDiceLoss(nn.Module):
    def forward(self, scores, target):
        target = target.float()
        target.requires_grad = True  # expect: SF101
        probs = torch.sigmoid(scores)
        inter = (probs * target).sum(dim=(-1, -2))
        union = probs.sum(dim=(-1, -2)) + target.sum(dim=(-1, -2))
        return 1 - ((2 * inter + 1e-5) / (union + 1e-5)).mean()


def train(model, loader, optimizer, epochs=1):
    criterion = SoftDiceLoss()
    for _ in range(epochs):
        for images, trimaps in loader:
            loss = criterion(model(images), trimaps)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
