"""Near miss: the squared-gradient scores are an EWC Fisher estimate stored on the object for a penalty computed
against the live parameters every later step (state the device needs, legitimate)."""
import torch


class EwcClient:
    def __init__(self, model, loader, criterion, device):
        self.model = model
        self.loader = loader
        self.criterion = criterion
        self.device = device
        self.fisher = None
        self.anchor = None

    def consolidate(self, max_batches=8):
        fisher = [torch.zeros_like(p.data) for p in self.model.parameters()]
        for batches, (data, target) in enumerate(self.loader, start=1):
            self.model.zero_grad()
            self.criterion(self.model(data.to(self.device)), target.to(self.device)).backward()
            for idx, param in enumerate(self.model.parameters()):
                if param.grad is not None:
                    fisher[idx] += param.grad.detach() ** 2
            if batches >= max_batches:
                break
        self.fisher = fisher
        self.anchor = [p.detach().clone() for p in self.model.parameters()]

    def penalty(self):
        return sum((f * (p - a) ** 2).sum() for f, p, a in zip(self.fisher, self.model.parameters(), self.anchor))
