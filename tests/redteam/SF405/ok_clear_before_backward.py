"""The usual order: clear, backward, step."""
import torch

optimizer = torch.optim.Adam(model.parameters())
for batch in loader:
    optimizer.zero_grad()
    model(batch).mean().backward()
    optimizer.step()
