"""An evaluation helper reached through another helper, one call site outside no_grad."""
import torch


def run_validation(net, batches):
    net.eval()
    total = 0.0
    for x, y in batches:
        total += (net(x) - y).pow(2).mean().item()  # expect: SF106
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


def final_check(net, batches):
    show_metrics(net, batches)
