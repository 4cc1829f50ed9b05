"""Near miss: timm-style `partial(torch.autocast, ..., dtype=torch.float16)` entered every step, with the loss scaled by a scaler object (timm NativeScaler, a GradScaler wrapper)."""
import torch
from functools import partial
from timm.utils import NativeScaler


def main(model, loader, criterion, optimizer, device):
    amp_autocast = partial(torch.autocast, device_type=device.type, dtype=torch.float16)
    scaler = NativeScaler()
    for epoch in range(100):
        for x, y in loader:
            with amp_autocast():
                loss = criterion(model(x), y)
            optimizer.zero_grad()
            scaler(loss, optimizer)
