"""The loss is divided by the accumulation count; a running mean over the batch index is only logged."""
import torch.nn.functional as F

total = 0.0
for i, (x, y) in enumerate(loader):
    loss = F.cross_entropy(model(x), y) / accum
    loss.backward()
    total += loss.item() * accum
    if (i + 1) % accum == 0:
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {(i + 1) // accum}: mean loss {total / (i + 1):.4f}")
