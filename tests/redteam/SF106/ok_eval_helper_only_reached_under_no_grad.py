"""An evaluation helper reached through another helper only under no_grad."""
import torch


def run_validation(net, batches):
    net.eval()
    total = 0.0
    for x, y in batches:
        total += (net(x) - y).pow(2).mean().item()
    net.train()
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
