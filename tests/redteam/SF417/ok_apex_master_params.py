"""apex amp's master parameters."""
import torch
from apex import amp


def step(model, batch, optimizer):
    loss = model(batch).mean()
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
    optimizer.step()
