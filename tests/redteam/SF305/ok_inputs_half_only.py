"""Tensors are cast to half and back for a quantisation-noise augmentation; the model stays float32."""
import torch

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    x_noisy = x.half().float()
    loss = torch.nn.functional.mse_loss(model(x_noisy), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
