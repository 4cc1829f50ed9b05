"""Mined (character LM script): `torch.amp.autocast` with a device-dependent type and a `torch.amp.GradScaler`, clip before the scaler step."""
import torch
import torch.nn.functional as F


def run(model, sample_batch, optimizer, scheduler, device, epochs=100, steps=50):
    scaler = torch.amp.GradScaler(device)
    for epoch in range(epochs):
        for _ in range(steps):
            x, y = sample_batch()
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            with torch.amp.autocast(device_type="cuda" if device == "cuda" else "cpu"):
                logits = model(x)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)  # expect: SF303
            scaler.step(optimizer)
            scaler.update()
        scheduler.step()
