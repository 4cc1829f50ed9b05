"""A hand-written trainer evaluates every epoch through self._validate(), which never restores."""
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, net, opt, train_dl, val_dl):
        self.net = net
        self.opt = opt
        self.train_dl = train_dl
        self.val_dl = val_dl

    @torch.no_grad()
    def _validate(self):
        self.net.eval()
        return sum(F.cross_entropy(self.net(x), y).item() for x, y in self.val_dl)

    def fit(self, epochs):
        self.net.train()
        for epoch in range(epochs):
            for x, y in self.train_dl:
                self.opt.zero_grad()
                F.cross_entropy(self.net(x), y).backward()
                self.opt.step()
            self._validate()  # expect: SF407
