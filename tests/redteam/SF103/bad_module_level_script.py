"""A module-level training script sums the loss tensor into a float for the epoch log."""
import torch
import torch.nn as nn

model = nn.Linear(10, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 10), torch.randn(4, 1)) for _ in range(8)]

for epoch in range(3):
    epoch_loss = 0.0
    for x, y in data:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        epoch_loss = epoch_loss + loss  # expect: SF103
    print(epoch, epoch_loss)
