"""Mined (siamese tracker trainer): the step runs only when the loss is finite, and the clip follows it unconditionally."""
import math

import torch


def train_epoch(net, loader, optimizer, device):
    net.train()
    for batch in loader:
        exemplar, search, label = (t.to(device) for t in batch)
        _, _, loss = net(exemplar, search, label)
        loss = torch.mean(loss)
        optimizer.zero_grad()
        loss.backward()
        if math.isfinite(loss.item()):
            optimizer.step()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 10)  # expect: SF406
