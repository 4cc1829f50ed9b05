"""Legacy loop that explicitly wraps labels as Variable(..., requires_grad=False): the target does not require grad (legitimate)."""
import torch
from torch.autograd import Variable


def train(net, loader, criterion, optimizer):
    for inputs, targets in loader:
        inputs = Variable(inputs.cuda())
        targets = Variable(targets.float().cuda(), requires_grad=False)
        loss = criterion(net(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
