"""Progressive resizing: a new optimizer per stage, its lr read from the stage's config (not a decay of a counter)."""
import torch

for stage in stages:
    model.unfreeze(stage.layers)
    optimizer = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()), lr=stage.lr)
    for x, y in stage.loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
