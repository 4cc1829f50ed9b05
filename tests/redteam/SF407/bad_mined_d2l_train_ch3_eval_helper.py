"""Mined (d2l port's train_ch3): the per-epoch accuracy helper switches the net to eval and nothing switches it back."""
import torch
from torch import optim


def evaluate_accuracy(data_iter, net, device=torch.device("cpu")):
    net.eval()
    correct, n = 0.0, 0
    for X, y in data_iter:
        X, y = X.to(device), y.to(device)
        with torch.no_grad():
            correct += (net(X).argmax(dim=1) == y.long()).sum().item()
            n += y.shape[0]
    return correct / n


def train_ch3(net, train_iter, test_iter, criterion, num_epochs, lr):
    optimizer = optim.SGD(net.parameters(), lr=lr)
    for epoch in range(num_epochs):
        total = 0.0
        for X, y in train_iter:
            optimizer.zero_grad()
            loss = criterion(net(X), y)
            loss.backward()
            optimizer.step()
            total += loss.item()
        test_acc = evaluate_accuracy(test_iter, net)  # expect: SF407
        print(epoch + 1, total, test_acc)
