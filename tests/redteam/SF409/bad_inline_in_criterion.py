"""The copy is built inline as the criterion's first argument (bad)."""
import torch.nn as nn

criterion = nn.BCEWithLogitsLoss()
for x, y in loader:
    scores = model(x)
    loss = criterion(scores.detach().requires_grad_(True), y)  # expect: SF409
    opt.zero_grad()
    loss.backward()
    opt.step()
