"""Autocast on XLA without a dtype computes in bfloat16."""
import torch


def train_step(model, batch, optimizer):
    with torch.autocast("xla"):
        loss = model(batch).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
