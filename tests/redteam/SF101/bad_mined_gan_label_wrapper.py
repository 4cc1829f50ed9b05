"""Mined shape: a callable GAN-criterion object builds its real/fake target from a buffer and wraps it in Variable(..., requires_grad=True) before BCE (bad)."""
import torch
from torch import nn
from torch.autograd import Variable


class AdversarialTargets(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("one", torch.tensor(1.0))
        self.register_buffer("zero", torch.tensor(0.0))
        self.bce = nn.BCEWithLogitsLoss()

    def __call__(self, scores, is_real):
        wanted = (self.one if is_real else self.zero).expand_as(scores)
        wanted = Variable(wanted, requires_grad=True)  # expect: SF101
        return self.bce(scores, wanted)
