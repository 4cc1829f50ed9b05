"""Mined look-alike (text classifier): gradients are cleared at the top of every pass and the scaler steps on every other one, so the clip acts on one micro-batch's complete gradient (nothing accumulates)."""
import torch


def train_fn(model, loader, optimizer, scaler, max_norm, loss_of):
    model.train()
    for index, batch in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda"):
            loss = loss_of(model(batch["x"]), batch["label"])
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if (index + 1) % 2:
            scaler.step(optimizer)
            scaler.update()
