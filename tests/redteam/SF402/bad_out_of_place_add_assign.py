"""Trainer that reverts an Adam step with `p.data = p.data.add(p.grad, alpha=lr)` (out-of-place add assigned back, bad)."""
import torch


class ProbeTrainer:
    def __init__(self, model, lr):
        self.model = model
        self.lr = lr
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)

    def probe(self, x, y, loss_fn):
        self.optimizer.zero_grad()
        loss_fn(self.model(x), y).backward()
        self.optimizer.step()
        after = loss_fn(self.model(x), y).item()
        for p in self.model.parameters():
            if p.grad is not None:
                p.data = p.data.add(p.grad, alpha=self.lr)  # expect: SF402
        return after
