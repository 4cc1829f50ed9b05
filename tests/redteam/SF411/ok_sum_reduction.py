"""Sum-reduced loss: summed over micro-batches it is the sum over the large batch (correct as written)."""
import torch
import torch.nn.functional as F

opt = torch.optim.SGD(model.parameters(), lr=0.01)
for i, (x, y) in enumerate(loader):
    loss = F.cross_entropy(model(x), y, reduction="sum")
    loss.backward()
    if (i + 1) % accum == 0:
        opt.step()
        opt.zero_grad()
