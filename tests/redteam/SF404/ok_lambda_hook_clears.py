"""A lambda registered as a post-step hook clears the gradients."""
import torch

optimizer = torch.optim.Adam(model.parameters())
optimizer.register_step_post_hook(lambda opt, *_: opt.zero_grad())
for batch in loader:
    model(batch).sum().backward()
    optimizer.step()
