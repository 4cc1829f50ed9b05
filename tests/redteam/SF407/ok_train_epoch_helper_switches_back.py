"""ok train epoch helper switches back."""
import torch
import torch.nn.functional as F


def train_one_epoch(model, loader, opt):
    model.train()
    for x, y in loader:
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    return [model(x) for x, _ in loader]


def fit(model, loader, val_loader, opt, epochs):
    for epoch in range(epochs):
        train_one_epoch(model, loader, opt)
        evaluate(model, val_loader)
