"""Regression head: the network output is detached, flattened and moved before being re-leafed for the loss; no gradient reaches the network (bad)."""
import torch.nn.functional as F


def train_epoch(net, loader, optimizer, device):
    for inputs, targets in loader:
        out = net(inputs.to(device))
        flat = out.detach().view(-1).to(device).requires_grad_()  # expect: SF409
        loss = F.mse_loss(flat, targets.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
