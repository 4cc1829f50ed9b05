"""A trainer's step method assigns a new optimizer to self and steps it; fit calls it per batch."""
import torch


class Trainer:
    def __init__(self, model):
        self.model = model

    def step(self, batch):
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)  # expect: SF408
        self.opt.zero_grad()
        self.model(batch).mean().backward()
        self.opt.step()

    def fit(self, loader):
        for batch in loader:
            self.step(batch)
