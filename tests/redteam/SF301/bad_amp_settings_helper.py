"""Amp settings helper (must be reported)."""
import torch


def train_epoch(model, loader, optimizer, device):
    amp_dtype = torch.float16 if device.type == "cuda" else torch.float16
    model.train()
    for batch in loader:
        with torch.autocast(device_type=device.type, dtype=amp_dtype):  # expect: SF301
            loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
