"""Near miss: the helper method the batch loop calls decays the buffers it is handed before adding (`a.mul_(beta)`):
an exponential moving average of the gradients, state rather than a sum (legitimate)."""
import torch


class GradientAverages:
    def _update(self, averages, params, beta=0.9):
        for a, p in zip(averages, params):
            a.mul_(beta)
            a.add_(p.grad, alpha=1 - beta)

    def run(self, model, loader):
        params = list(model.parameters())
        averages = [torch.zeros_like(p) for p in params]
        for x, y in loader:
            model.zero_grad()
            model.loss(x, y).backward()
            self._update(averages, params)
        return sum(float(a.norm()) for a in averages)
