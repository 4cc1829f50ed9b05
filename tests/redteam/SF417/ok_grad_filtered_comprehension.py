"""Only the parameters that received a gradient."""
import torch


def step(model, batch, optimizer):
    loss = model(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.grad is not None], 1.0)
    optimizer.step()
