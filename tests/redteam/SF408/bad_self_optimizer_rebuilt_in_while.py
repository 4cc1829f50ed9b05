"""A fitting method rebuilds self.optimizer on every pass of its while loop."""
from torch import optim


class Fitter:
    def __init__(self, model, lr):
        self.model = model
        self.lr = lr

    def fit(self, batches, tol):
        gap = float("inf")
        while gap > tol:
            self.optimizer = optim.Adam(self.model.parameters(), lr=self.lr)  # expect: SF408
            self.optimizer.zero_grad()
            loss = self.model.nll(next(batches))
            loss.backward()
            self.optimizer.step()
            gap = loss.item()
