"""With set detect anomaly true in loop (must be reported)."""
import torch

for epoch in range(num_epochs):
    for x, y in train_loader:
        with torch.autograd.set_detect_anomaly(True):  # expect: SF203
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
        optimizer.step()
