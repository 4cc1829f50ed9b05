"""The optimizer's first parameter group."""
import torch


def step(model, batch, optimizer):
    loss = model(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], 1.0)
    optimizer.step()
