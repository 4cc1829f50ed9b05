"""Mined (self-distillation trainer): legacy autocast entered with `enabled` passed positionally from a scaler test."""
import torch


def distill_step(student, teacher, views, criterion, scaler, optimizer):
    with torch.cuda.amp.autocast(scaler is not None):  # expect: SF302
        targets = teacher(views[:2])
        preds = student(views)
        loss = criterion(preds, targets)
    optimizer.zero_grad()
    if scaler is None:
        loss.backward()
        optimizer.step()
    else:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return loss.item()
