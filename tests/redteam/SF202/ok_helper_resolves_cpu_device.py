"""CPU-only training script: a helper resolves the device as the CPU, so reading each moved sample's range
costs no device sync (correct)."""
import torch.nn.functional as F


def resolve_device():
    return "cpu"


def train(model, optimizer, loader, log):
    device = resolve_device()
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        for sample in x:
            log.append(sample.abs().max().item())
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
