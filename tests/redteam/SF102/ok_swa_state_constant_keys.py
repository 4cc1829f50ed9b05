"""SWA-style running average of parameters kept per parameter name (constant key set, overwritten in place)."""
import torch


class WeightAverager:
    def __init__(self, model):
        self.model = model
        self.n = 0
        self.avg = {name: p.detach().clone() for name, p in model.named_parameters()}

    @torch.no_grad()
    def update(self):
        self.n += 1
        for name, p in self.model.named_parameters():
            self.avg[name].mul_(self.n / (self.n + 1)).add_(p.detach(), alpha=1 / (self.n + 1))


def train(model, loader, optimizer, averager, swa_start):
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step >= swa_start:
            averager.update()
