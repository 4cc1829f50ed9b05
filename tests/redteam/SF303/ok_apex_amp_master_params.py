"""NVIDIA apex amp: the clip on `amp.master_params(optimizer)` after `scale_loss` is the documented order."""
import torch
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for batch in loader:
    optimizer.zero_grad()
    with amp.scale_loss(model(batch), optimizer) as scaled_loss:
        scaled_loss.backward()
    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
    optimizer.step()
