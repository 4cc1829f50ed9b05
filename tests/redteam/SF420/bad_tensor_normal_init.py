"""Weights filled with .normal_() by hand in a model class, trained from the guard."""
import torch


class Affine(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = torch.nn.Parameter(torch.empty(n, n))
        self.w.data.normal_(0, 0.02)

    def forward(self, x):
        return x @ self.w


if __name__ == "__main__":  # expect: SF420
    m = Affine(4)
    o = torch.optim.SGD(m.parameters(), lr=0.01)
    for x in xs:
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
