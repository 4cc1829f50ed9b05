"""The adds happen in a helper method the batch loop calls."""
import torch


class Stats:
    def _accumulate(self, sums, params):
        for s, p in zip(sums, params):
            s.add_(p.grad)

    def run(self, model, loader):
        params = list(model.parameters())
        sums = [torch.zeros_like(p) for p in params]  # expect: SF105
        for x, y in loader:
            model.zero_grad()
            model.loss(x, y).backward()
            self._accumulate(sums, params)
        return sum(float(s.norm()) for s in sums)
