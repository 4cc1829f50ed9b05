"""A trainer method halves the learning rate every epoch by building a new Adam (moments reset each epoch)."""
from torch import optim


class Trainer:
    def __init__(self, net, loader, lr):
        self.net, self.loader, self.lr = net, loader, lr

    def run(self, epochs):
        lr = self.lr
        for _ in range(epochs):
            lr = lr / 2
            self.opt = optim.Adam(self.net.parameters(), lr=lr)  # expect: SF408
            for batch in self.loader:
                self.opt.zero_grad()
                self.net(batch).mean().backward()
                self.opt.step()
