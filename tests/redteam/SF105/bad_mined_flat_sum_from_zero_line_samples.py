"""Mined shape: a continual-learning method evaluates the loss at points along the line between two weight vectors
and sums the flattened gradient of each point into `grads`, which starts as the integer 0 and becomes a
parameter-sized tensor on the first add (bad: a flat model-sized sum kept on the accelerator across samples)."""
import numpy as np
import torch


class LineConnectivity:
    def __init__(self, backbone, criterion, n_samples=10):
        self.backbone = backbone
        self.criterion = criterion
        self.n_samples = n_samples

    def point_loss(self, model, loader):
        total, count = 0.0, 0
        for x, y in loader:
            total += self.criterion(model(x), y)
            count += x.shape[0]
        return total / count

    def line_gradient(self, w_start, w_end, loader, set_weights):
        grads = 0
        for t in np.linspace(0.0, 1.0, self.n_samples):
            model = set_weights(self.backbone, w_start + (w_end - w_start) * t)
            self.point_loss(model, loader).backward()
            grads += torch.cat([p.grad.view(-1) for _, p in model.named_parameters()])  # expect: SF105
        return grads.norm().item()
