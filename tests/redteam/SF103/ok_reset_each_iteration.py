"""The accumulator is reset at the top of every iteration, so nothing outlives it."""
import torch.nn.functional as F


class Strategy:
    def __init__(self, model, opt):
        self.model = model
        self.opt = opt
        self.loss = 0.0

    def training_epoch(self, loader):
        for x, y in loader:
            self.loss = 0.0
            self.loss += F.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            self.loss.backward()
            self.opt.step()
