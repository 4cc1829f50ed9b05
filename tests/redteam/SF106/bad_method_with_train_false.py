"""A helper switches the model with train(False) and scores a loader."""
import torch


def score(model, loader):
    model.train(False)
    return [model(x).max(1).values.mean().item() for x in loader]  # expect: SF106
