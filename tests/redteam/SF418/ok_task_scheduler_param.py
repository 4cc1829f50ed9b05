"""A job scheduler called `scheduler` is ticked on every micro-batch; the file's call shows it is no LR schedule."""
import torch
from apscheduler.schedulers.background import BackgroundScheduler


def train(model, loader, optimizer, scheduler, accum):
    for i, (x, y) in enumerate(loader):
        (torch.nn.functional.mse_loss(model(x), y) / accum).backward()
        scheduler.step()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()


def main(model, loader):
    train(model, loader, torch.optim.SGD(model.parameters(), lr=0.1), BackgroundScheduler(), accum=4)
