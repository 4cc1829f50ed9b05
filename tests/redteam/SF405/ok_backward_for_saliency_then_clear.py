"""A saliency backward, a clear, then the real backward and step."""
import torch

optimizer = torch.optim.Adam(model.parameters())
for x, y in loader:
    x.requires_grad_(True)
    model(x).max().backward()
    mask = x.grad.abs() > 0.1
    optimizer.zero_grad()
    criterion(model(x * mask), y).backward()
    optimizer.step()
