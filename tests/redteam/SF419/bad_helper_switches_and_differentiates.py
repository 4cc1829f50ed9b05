"""A metric helper switches its model to eval and calls backward to read an input-gradient metric."""
import torch


def input_sensitivity(model, x):
    model.eval()
    x = x.clone().requires_grad_(True)
    model(x).sum().backward()  # expect: SF419
    model.train()
    return x.grad.norm().item()


def train(model, loader, optimizer):
    for i, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if i % 100 == 0:
            print(input_sensitivity(model, x))
