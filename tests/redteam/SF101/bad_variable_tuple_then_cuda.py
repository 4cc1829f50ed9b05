"""Legacy regression loop: input and label wrapped in one tuple assignment, the label with requires_grad=True, both moved to the GPU on the next line; the label is only the loss target (bad)."""
import torch
import torch.nn as nn
from torch.autograd import Variable


def fit(net, batches, epochs):
    loss_fn = nn.SmoothL1Loss()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    for _ in range(epochs):
        for feats, values in batches:
            feats, values = Variable(feats), Variable(values, requires_grad=True)  # expect: SF101
            feats, values = feats.cuda(), values.cuda()
            pred = net(feats)
            loss = loss_fn(pred, values)
            opt.zero_grad()
            loss.backward()
            opt.step()
