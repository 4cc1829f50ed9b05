"""A consistency loss module of the file named for what it measures (`ViewAgreement`): its value is
backpropagated, and it is handed one view's embedding twice instead of two views', so it is constant and trains nothing."""
import torch
import torch.nn.functional as F
from torch import nn


class ViewAgreement(nn.Module):
    def __init__(self, temperature: float = 0.1) -> None:
        super().__init__()
        self.temperature = temperature

    def forward(self, first, second):
        first = F.normalize(first, dim=1)
        second = F.normalize(second, dim=1)
        return -(first * second).sum(dim=1).div(self.temperature).mean()


def fit(encoder, augment, batches, optimizer):
    agreement = ViewAgreement()
    for images in batches:
        embedded = encoder(augment(images))
        value = agreement(embedded, embedded)  # expect: SF401
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
