"""The clip is in a function of its own, not after a step in the same function."""
import torch


def clip(model):
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)


def train_step(model, optimizer, batch):
    optimizer.zero_grad()
    model(batch).mean().backward()
    clip(model)
    optimizer.step()
