"""Near miss: the autocast factory is chosen at run time (`suppress` or a partial of torch.autocast with a configured dtype) and a scaler is built for float16."""
from contextlib import suppress
from functools import partial

import torch
from timm.utils import NativeScaler


def main(args, model, loader, criterion, optimizer, device, amp_dtype):
    amp_autocast = suppress
    loss_scaler = None
    if args.amp:
        amp_autocast = partial(torch.autocast, device_type=device.type, dtype=amp_dtype)
        if device.type == "cuda" and amp_dtype == torch.float16:
            loss_scaler = NativeScaler()
    for x, y in loader:
        with amp_autocast():
            loss = criterion(model(x), y)
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer)
        else:
            loss.backward()
            optimizer.step()
