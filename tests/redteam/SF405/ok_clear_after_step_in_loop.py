"""Backward, step, then clear: the clear of one pass precedes the next backward."""
import torch

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for batch in loader:
    model(batch).mean().backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
