"""Mined (transformer translation trainer): the scaler is a module global, the clip limit a parameter of the epoch function."""
import torch
from torch.cuda.amp import GradScaler, autocast

scaler = GradScaler()


def train(model, iterator, optimizer, criterion, clip, device):
    model.train()
    epoch_loss = 0
    for src, trg in iterator:
        src, trg = src.to(device), trg.to(device)
        optimizer.zero_grad()
        with autocast():
            out = model(src, trg[:, :-1])
            loss = criterion(out.reshape(-1, out.shape[-1]), trg[:, 1:].reshape(-1))
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)  # expect: SF303
        scaler.step(optimizer)
        scaler.update()
        epoch_loss += loss.item()
    return epoch_loss / len(iterator)
