"""Per-epoch rebuild with a decayed lr, the steps in the inner batch loop: the momentum is thrown away at
every epoch only to change the rate (issue 21; `param_group["lr"]` or a scheduler keep it)."""
import torch

for epoch in range(epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr * 0.5 ** epoch)  # expect: SF408
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
