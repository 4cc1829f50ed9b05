"""Mined shape: a fairness probe loads a checkpoint onto the GPU, allocates a zeros_like per named parameter in a
dict, adds every batch's detached gradient, divides, and returns the dict; the caller computes two of them and
compares them on the host (bad)."""
import numpy as np
import torch


def aggregated_gradients(model, loader, criterion):
    aggregated = {name: torch.zeros_like(param) for name, param in model.named_parameters()}  # expect: SF105
    model.train()
    for inputs, labels in loader:
        model.zero_grad()
        loss = criterion(model(inputs.cuda()), labels.cuda().float())
        loss.backward()
        for name, param in model.named_parameters():
            if param.grad is not None:
                aggregated[name] += param.grad.detach()
    for name in aggregated:
        aggregated[name] /= len(loader)
    return aggregated


def mean_difference(model, loader_a, loader_b, criterion):
    first = aggregated_gradients(model, loader_a, criterion)
    second = aggregated_gradients(model, loader_b, criterion)
    return {name: float(np.mean(np.abs(first[name].flatten().cpu().numpy() - second[name].flatten().cpu().numpy())))
            for name in first}
