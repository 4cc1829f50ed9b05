"""Multi-task loop: every task loss is turned into a Python number in a list comprehension before it is logged (legitimate)."""
import torch.nn.functional as F


def train(model, heads, loader, optimizer):
    log = []
    for x, ys in loader:
        feats = model(x)
        parts = [F.mse_loss(head(feats), y) for head, y in zip(heads, ys)]
        loss = sum(parts)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.extend([part.detach().float().item() for part in parts])
    return log
