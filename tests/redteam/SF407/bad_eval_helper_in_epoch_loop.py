"""bad eval helper in epoch loop."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def evaluate(network, loader):
    network.eval()
    return sum((network(x).argmax(1) == y).sum().item() for x, y in loader)


def main(network, optimizer, train_loader, test_loader, epochs):
    network.train()
    for epoch in range(1, epochs + 1):
        for data, target in train_loader:
            optimizer.zero_grad()
            loss = F.nll_loss(network(data), target)
            loss.backward()
            optimizer.step()
        evaluate(network, test_loader)  # expect: SF407
