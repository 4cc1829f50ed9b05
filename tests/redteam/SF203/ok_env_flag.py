"""Env flag (must stay silent)."""
import os

import torch

torch.autograd.set_detect_anomaly(os.environ.get("DETECT_ANOMALY") == "1")

for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
