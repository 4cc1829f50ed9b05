"""Near miss: the helper the batch loop calls adds into the buffers it is handed and also stores them on the object
for a later consumer (the buffers leave the function: their consumer decides where they live)."""
import torch


class Probe:
    def _accumulate(self, sums, params):
        for s, p in zip(sums, params):
            s.add_(p.grad)
        self.latest = sums

    def run(self, model, loader):
        params = list(model.parameters())
        sums = [torch.zeros_like(p) for p in params]
        for x, y in loader:
            model.zero_grad()
            model.loss(x, y).backward()
            self._accumulate(sums, params)
