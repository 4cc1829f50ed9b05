"""A factory built and moved on the spot: SF205 reports it, not this rule."""
import torch


def train(model, loader, optimizer):
    for x, y in loader:
        ones = torch.ones(x.size(0)).cuda()
        loss = ((model(x) - y).pow(2).mean(1) * ones).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
