"""Autograd alias import (must be reported)."""
from torch import autograd


class Solver:
    def __init__(self, net, optimizer):
        self.net, self.optimizer = net, optimizer

    def fit(self, loader):
        autograd.set_detect_anomaly(True)  # expect: SF203
        for batch in loader:
            self.optimizer.zero_grad()
            self.net(batch).loss.backward()
            self.optimizer.step()
