"""The clear runs once per epoch, the steps once per batch."""
import torch

optimizer = torch.optim.AdamW(net.parameters())
for epoch in range(epochs):
    optimizer.zero_grad()
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()  # expect: SF404
