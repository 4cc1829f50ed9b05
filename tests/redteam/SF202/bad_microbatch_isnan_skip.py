"""Gradient accumulation with a NaN test on every micro-batch loss inside the step (bad)."""
import torch


def optimization_step(model, optimizer, micro_batches, scaler):
    for mb in micro_batches:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            mb_loss = model(**mb).loss / len(micro_batches)
        if torch.isnan(mb_loss):  # expect: SF202
            continue
        scaler.scale(mb_loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
