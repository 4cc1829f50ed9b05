"""Near miss: an actor-critic optimizer keeps per-parameter eligibility traces on `self` and decays them in place
(`z.mul_(gamma).add_(p.grad)`) every step: optimizer state, legitimately on the device."""
import torch


class TraceOptimizer:
    def __init__(self, model, gamma=0.99, lr=1e-3):
        self.model = model
        self.gamma = gamma
        self.lr = lr
        self.z = [torch.zeros_like(p) for p in model.parameters()]

    def accumulate(self):
        self.z = [z.mul_(self.gamma).add_(p.grad) for z, p in zip(self.z, self.model.parameters())]

    def step(self, advantage):
        with torch.no_grad():
            for p, z in zip(self.model.parameters(), self.z):
                p.add_(self.lr * advantage * z)
