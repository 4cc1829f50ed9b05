"""Gradients are cleared by a hook registered on the optimizer."""
import torch


def clear_after_step(optimizer, args, kwargs):
    optimizer.zero_grad(set_to_none=True)


optimizer = torch.optim.AdamW(model.parameters())
optimizer.register_step_post_hook(clear_after_step)
for batch in loader:
    model(batch).loss.backward()
    optimizer.step()
