"""The clip without unscale is in the branch that does not use the scaler."""
import torch

scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
for batch in loader:
    if use_amp:
        scaler.scale(model(batch)).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        model(batch).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    optimizer.zero_grad()
