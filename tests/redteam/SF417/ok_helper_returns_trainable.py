"""A helper returns the trainable parameters; clipping its result."""
import torch


def trainable(model):
    return [p for p in model.parameters() if p.requires_grad]


def step(model, batch, optimizer):
    loss = model(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(trainable(model), 1.0)
    optimizer.step()
