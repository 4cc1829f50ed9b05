"""A hand-written while loop over steps: a constant target tensor is filled on the host and moved every iteration."""
import torch
from torch import full


def train(model, get_batch, optimizer, max_steps, device):
    step = 0
    while step < max_steps:
        x = get_batch().to(device)
        real = full((x.size(0), 1), 0.9).to(device)  # expect: SF205
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x), real)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        step += 1
