"""Trains for three optimizer steps, then ends by itself."""

import torch

model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for it in range(3):
    loss = model(torch.randn(2, 4)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("done after 3 steps")
