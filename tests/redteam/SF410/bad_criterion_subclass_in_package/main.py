"""Script: the package's criterion is fed a sigmoid of the scores."""
import torch

from lib import WeightedCE


def run(model, data, counts):
    objective = WeightedCE(counts)
    optim = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for feats, label in data:
        squashed = torch.sigmoid(model(feats))
        cost = objective(squashed, label)  # expect: SF410
        optim.zero_grad()
        cost.backward()
        optim.step()
