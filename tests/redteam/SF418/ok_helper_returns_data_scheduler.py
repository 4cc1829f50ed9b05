"""A helper returns a curriculum schedule (which data to sample next), stepped per micro-batch: not a learning rate."""
import torch


class Curriculum:
    def __init__(self, levels):
        self.levels = levels
        self.at = 0

    def step(self):
        self.at = min(self.at + 1, self.levels - 1)


def make_scheduler(levels):
    return Curriculum(levels)


def fit(model, loader, accum):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scheduler = make_scheduler(5)
    for i, (x, y) in enumerate(loader):
        (torch.nn.functional.mse_loss(model(x), y) / accum).backward()
        scheduler.step()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
