"""A user focal loss that takes probabilities, not a torch loss (not checked)."""
import torch


def focal_loss(probs, target, gamma=2.0):
    pt = probs.gather(1, target.unsqueeze(1)).squeeze(1)
    return (-(1 - pt) ** gamma * torch.log(pt)).mean()


def step(model, x, y):
    return focal_loss(torch.softmax(model(x), dim=1), y)
