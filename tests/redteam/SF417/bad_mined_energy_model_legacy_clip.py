"""Mined (energy-based toy model): the legacy clip_grad_norm handed the mean energy loss."""
import torch


def train(energy_net, loader, optimizer, sample_negatives, reg=0.1, epochs=10):
    for epoch in range(epochs):
        for pos in loader:
            neg = sample_negatives(energy_net, pos)
            optimizer.zero_grad()
            pos_e = energy_net(pos)
            neg_e = energy_net(neg)
            loss = (pos_e - neg_e + reg * (pos_e.square() + neg_e.square())).mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm(loss, 0.01)  # expect: SF417
            optimizer.step()
