"""Mined (differentiable top-k layer): a weight built as a plain tensor, moved, then marked trainable in place."""
import torch


class SoftTopK(torch.nn.Module):
    def __init__(self, k, n, eps=0.1):
        super().__init__()
        self.k = k
        self.eps = eps
        self.W = torch.randn(1, n, 1)  # expect: SF413
        if torch.cuda.is_available():
            self.W = self.W.cuda()
        self.W.requires_grad = True

    def forward(self, scores):
        return torch.softmax(scores.unsqueeze(-1) * self.W / self.eps, dim=1).squeeze(-1)
