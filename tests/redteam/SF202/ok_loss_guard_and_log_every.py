"""one finiteness guard per step plus loss.item() behind the log interval (ok)."""
import torch

for step, batch in enumerate(loader):
    loss = model(**{k: v.to(device) for k, v in batch.items()}).loss
    if not torch.isfinite(loss):
        optimizer.zero_grad()
        continue
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % args.logging_steps == 0:
        print(step, loss.item())
