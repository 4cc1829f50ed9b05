"""Ensemble evaluation: each member switched to eval and run over the test set."""
import torch


def ensemble_accuracy(members, test_loader):
    correct = 0
    for member in members:
        member.eval()
        for x, y in test_loader:
            correct += (member(x).argmax(1) == y).sum().item()  # expect: SF106
    return correct
