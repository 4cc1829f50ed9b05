"""The clear is in the branch that skips the step."""
import torch

optimizer = torch.optim.Adam(model.parameters())
for batch in loader:
    loss = model(batch).mean()
    loss.backward()
    if torch.isfinite(loss):
        optimizer.step()
    else:
        optimizer.zero_grad()
