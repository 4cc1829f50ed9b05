"""The logits of the model handed to an aliased clip_grad_value_."""
import torch.nn as nn
from torch.nn.utils import clip_grad_value_ as clamp


def step(net: nn.Module, x, y, opt, criterion):
    logits = net(x)
    loss = criterion(logits, y)
    opt.zero_grad()
    loss.backward()
    clamp(logits, 0.5)  # expect: SF417
    opt.step()
