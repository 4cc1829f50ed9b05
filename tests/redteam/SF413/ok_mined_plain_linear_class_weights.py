"""Mined (hand-written layer class for teaching): a plain class with weights that require grad, not an nn.Module."""
import torch


class Linear:
    def __init__(self, n_in, n_out, device=torch.device("cpu")):
        self.w = torch.randn(size=(n_in, n_out), requires_grad=True, device=device)
        self.b = torch.randn(size=(1, n_out), requires_grad=True, device=device)

    def __call__(self, x):
        return x @ self.w + self.b

    def params(self):
        return [self.w, self.b]
