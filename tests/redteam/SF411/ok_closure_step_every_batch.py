"""Backward and step both run under the same modulo gate (one step per gated backward: not accumulation)."""
import torch

opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i, (x, y) in enumerate(loader):
    if i % 2 == 0:
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
