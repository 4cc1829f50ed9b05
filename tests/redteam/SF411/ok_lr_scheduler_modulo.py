"""A scheduler and an EMA update behind `% N`, the optimizer steps every iteration (not accumulation)."""
import torch

optimizer = torch.optim.AdamW(model.parameters())
for i, (x, y) in enumerate(loader):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if i % 10 == 0:
        scheduler.step()
        ema.update(model)
