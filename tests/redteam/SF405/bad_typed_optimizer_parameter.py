"""A step helper with an annotated optimizer clears right after backward."""
import torch


def optimize(loss: torch.Tensor, optimizer: torch.optim.Optimizer) -> float:
    loss.backward()
    optimizer.zero_grad()  # expect: SF405
    optimizer.step()
    return loss.item()
