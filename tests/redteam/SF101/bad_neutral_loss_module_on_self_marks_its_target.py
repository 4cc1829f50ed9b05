"""An overlap module of the file with no `Loss` in its name, held on the trainer: its `forward` casts the
mask it receives and makes it require grad, and its result is what the step backpropagates."""
import torch
from torch import nn


class MaskOverlap(nn.Module):
    def forward(self, scores, mask):
        mask = mask.float()
        mask.requires_grad = True  # expect: SF101
        probs = torch.sigmoid(scores)
        shared = (probs * mask).sum(dim=(-1, -2))
        return 1 - (2 * shared / (probs.sum(dim=(-1, -2)) + mask.sum(dim=(-1, -2)) + 1e-5)).mean()


class Trainer:
    def __init__(self, net, optimizer):
        self.net = net
        self.optimizer = optimizer
        self.overlap = MaskOverlap()

    def step(self, images, mask):
        value = self.overlap(self.net(images), mask)
        self.optimizer.zero_grad()
        value.backward()
        self.optimizer.step()
