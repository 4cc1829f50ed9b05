"""Variational RNN training: the deprecated `clip_grad_norm` after the step."""
import torch
from torch import nn


def train(epoch, model, optimizer, train_loader, clip):
    for batch_idx, (data, _) in enumerate(train_loader):
        data = data.squeeze().transpose(0, 1)
        optimizer.zero_grad()
        kld_loss, nll_loss, _, _ = model(data)
        loss = kld_loss + nll_loss
        loss.backward()
        optimizer.step()
        nn.utils.clip_grad_norm(model.parameters(), clip)  # expect: SF406
