"""Scheduler stepped once per epoch, outside the accumulation loop."""
import torch


def train(model, loader, epochs):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[30, 60])
    for epoch in range(epochs):
        for i, (x, y) in enumerate(loader):
            (torch.nn.functional.cross_entropy(model(x), y) / 2).backward()
            if (i + 1) % 2 == 0:
                opt.step()
                opt.zero_grad()
        scheduler.step()
