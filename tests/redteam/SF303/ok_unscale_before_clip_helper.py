"""Unscale in the step function, then a clip helper, then the scaler step."""
import torch


def clip_all(model, max_norm):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)


def train_step(model, batch, optimizer, scaler, max_norm):
    with torch.autocast("cuda"):
        loss = model(batch)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    clip_all(model, max_norm)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
