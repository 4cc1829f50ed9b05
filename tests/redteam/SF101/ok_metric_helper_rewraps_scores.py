"""Near miss: the scoring helper re-wraps only the *scores* with requires_grad=True (the input operand of
nn.BCELoss, whose gradient it returns for a sensitivity report); the labels are plain (legitimate for this rule)."""
import torch
import torch.nn as nn


def bce_and_sensitivity(scores, labels, device=torch.device("cpu")):
    scores = torch.tensor(scores, requires_grad=True).to(device)
    labels = torch.tensor(labels, dtype=torch.float32).to(device)
    loss = nn.BCELoss()(scores, labels)
    (sensitivity,) = torch.autograd.grad(loss, scores)
    return loss.item(), sensitivity
