"""Mined (framework speed comparison): a torch model whose layers live in a plain list and whose call computes the loss."""
import torch.nn as nn


class TorchModel(nn.Module):
    def __init__(self, n_in, n_hidden, n_out, loss):
        super().__init__()
        self.layers = [nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Linear(n_hidden, n_out)]  # expect: SF413
        self.loss = loss

    def __call__(self, x, target):
        for layer in self.layers:
            x = layer(x)
        return self.loss(x.squeeze(), target)
