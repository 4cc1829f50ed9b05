"""A trainer keeps `self.decay`, assigned from its own factory method returning an ExponentialLR."""
import torch
from torch.optim.lr_scheduler import ExponentialLR


class Runner:
    def __init__(self, net, accum):
        self.net = net
        self.accum = accum
        self.opt = torch.optim.Adam(net.parameters(), lr=3e-4)
        self.decay = self._make_decay()

    def _make_decay(self):
        return ExponentialLR(self.opt, gamma=0.999)

    def epoch(self, loader):
        for i, (x, y) in enumerate(loader):
            (torch.nn.functional.mse_loss(self.net(x), y) / self.accum).backward()
            self.decay.step()  # expect: SF418
            if (i + 1) % self.accum == 0:
                self.opt.step()
                self.opt.zero_grad()
