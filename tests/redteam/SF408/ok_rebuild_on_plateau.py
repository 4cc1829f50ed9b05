"""The optimizer is rebuilt only when the loss plateaus."""
import torch

optimizer = torch.optim.Adam(model.parameters())
for step, batch in enumerate(loader):
    loss = model(batch).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if plateaued(loss):
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
