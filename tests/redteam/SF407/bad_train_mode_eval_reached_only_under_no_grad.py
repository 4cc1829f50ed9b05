"""A function that sets train mode runs only under the callers' no_grad: an evaluation in train mode."""
import torch


def run_validation(net, batches):
    net.train()
    total = 0.0
    for x, y in batches:
        total += (net(x) - y).pow(2).mean().item()  # expect: SF407
    return total


def show_metrics(net, val_loader):
    print(run_validation(net, val_loader))


def fit(net, optimizer, batches, val_loader):
    for x, y in batches:
        loss = (net(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        show_metrics(net, val_loader)
