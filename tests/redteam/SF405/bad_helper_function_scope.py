"""A module-level function: backward, clip, clear, step."""
import torch


def apply_gradients(loss, model, optimizer: torch.optim.Optimizer):
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.zero_grad()  # expect: SF405
    optimizer.step()
