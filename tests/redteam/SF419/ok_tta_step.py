"""Test-time adaptation (TENT-style): entropy minimised in eval mode with a step after each backward."""
import torch


def adapt(model, optimizer, stream):
    model.eval()
    for x in stream:
        p = model(x).softmax(1)
        ent = -(p * p.log()).sum(1).mean()
        ent.backward()
        optimizer.step()
        optimizer.zero_grad()


def train(model, optimizer, loader):
    for x, y in loader:
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
