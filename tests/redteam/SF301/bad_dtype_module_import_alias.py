"""`from torch import float16 as half_t` held in a module constant, used as the autocast dtype."""
import torch
from torch import float16 as half_t

AMP_DTYPE = half_t


def train_step(model, batch, optimizer):
    with torch.autocast(device_type="cuda", dtype=AMP_DTYPE):  # expect: SF301
        loss = model(**batch).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
