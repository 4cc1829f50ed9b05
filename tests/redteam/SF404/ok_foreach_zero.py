"""Gradients zeroed with one multi-tensor call."""
import torch

optimizer = torch.optim.SGD(params, lr=0.1)
for x in loader:
    grads = [p.grad for p in params if p.grad is not None]
    torch._foreach_zero_(grads)
    loss_fn(params, x).backward()
    optimizer.step()
