"""Inside a try block, the clear comes between backward and step."""
import torch

optimizer = torch.optim.Adam(model.parameters())
for batch in loader:
    try:
        loss = model(batch).mean()
        loss.backward()
        optimizer.zero_grad()  # expect: SF405
        optimizer.step()
    except RuntimeError:
        continue
