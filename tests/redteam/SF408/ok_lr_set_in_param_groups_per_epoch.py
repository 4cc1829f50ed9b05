"""The optimizer is built once; each epoch writes the decayed rate into its param groups."""
import torch

optimizer = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9)
for epoch in range(epochs):
    lr = base_lr * 0.1 ** (epoch // 30)
    for group in optimizer.param_groups:
        group["lr"] = lr
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
