"""ok accuracy counts."""
import torch.nn.functional as F


def train(model, loader, opt):
    correct, seen = 0, 0
    for x, y in loader:
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        _, predicted = logits.max(1)
        correct += (predicted == y).sum()
        seen += y.size(0)
    return correct / seen
