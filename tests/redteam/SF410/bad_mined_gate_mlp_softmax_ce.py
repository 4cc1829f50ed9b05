"""Mined (expert-gating module): the gate's Sequential ends in nn.Softmax and `nn.CrossEntropyLoss()(self(x), target)` trains it."""
from torch import nn, optim


class SoftGate(nn.Module):
    def __init__(self, dim, n_experts):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, 64), nn.ReLU(), nn.Linear(64, n_experts), nn.Softmax(dim=-1))
        self.opt = optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x):
        return self.mlp(x)

    def update(self, x, target, bonus):
        self.opt.zero_grad()
        out = self(x)
        loss = nn.CrossEntropyLoss()(out, target)  # expect: SF410
        loss = loss - 0.5 * bonus
        loss.backward()
        self.opt.step()
        return loss.item()
