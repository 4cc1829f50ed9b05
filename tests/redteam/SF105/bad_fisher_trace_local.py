"""Diagonal Fisher summed over a data set, only reduced to its trace: a temporary the size of the model."""
import torch
import torch.nn.functional as F


def fisher_trace(model, loader):
    diag = {n: torch.zeros_like(p) for n, p in model.named_parameters() if p.requires_grad}  # expect: SF105
    for inputs, labels in loader:
        model.zero_grad()
        F.nll_loss(F.log_softmax(model(inputs), dim=-1), labels).backward()
        for n, p in model.named_parameters():
            if p.grad is not None:
                diag[n] += p.grad.detach() ** 2
    return sum(d.sum().item() for d in diag.values()) / len(loader)
