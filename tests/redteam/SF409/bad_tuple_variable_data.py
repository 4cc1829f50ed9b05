"""Two-headed model: both heads' outputs are re-wrapped from `.data` in one tuple assignment before their losses (bad)."""
import torch.nn as nn
from torch.autograd import Variable


def step(net, x, box, cls, optimizer):
    reg, logit = net(x)
    reg_v, logit_v = Variable(reg.data, requires_grad=True), Variable(logit.data, requires_grad=True)  # expect: SF409
    loss = nn.SmoothL1Loss()(reg_v, box) + nn.CrossEntropyLoss()(logit_v, cls)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
