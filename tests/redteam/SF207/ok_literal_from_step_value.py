"""torch.tensor of a value computed in the step (not a constant)."""
import torch


def train(model, loader, optimizer, device):
    for step, (x, y) in enumerate(loader):
        lr_scale = torch.tensor(min(1.0, step / 100), device=device)
        loss = (model(x.to(device)) - y.to(device)).pow(2).mean() * lr_scale
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
