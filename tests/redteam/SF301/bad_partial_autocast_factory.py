"""timm-style `partial(torch.autocast, dtype=torch.float16)` entered in the training loop, no scaler."""
from functools import partial

import torch

amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.float16)  # expect: SF301
for x, y in loader:
    with amp_autocast():
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
