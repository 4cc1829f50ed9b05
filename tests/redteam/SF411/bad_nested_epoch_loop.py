"""Epoch loop with an inner batch loop; the inner loop accumulates over `ACCUM` batches without dividing (bad)."""
import torch
import torch.nn as nn

ACCUM = 4
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_fn = nn.MSELoss()
for epoch in range(10):
    for batch_idx, (x, y) in enumerate(loader):
        pred = model(x)
        loss = loss_fn(pred, y)
        loss.backward()  # expect: SF411
        if (batch_idx + 1) % ACCUM == 0 or batch_idx + 1 == len(loader):
            optimizer.step()
            optimizer.zero_grad()
