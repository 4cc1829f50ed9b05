"""Near miss: a rollout appends the model's outputs to a buffer it is handed; the caller backpropagates the buffer (the helper's store effect)."""
import torch


def rollout(model, states, buffer):
    for s in states:
        buffer.append(model(s))


def train(model, states, optimizer):
    buffer = []
    rollout(model, states, buffer)
    loss = torch.stack(buffer).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
