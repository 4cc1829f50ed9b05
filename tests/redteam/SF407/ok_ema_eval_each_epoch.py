"""ok ema eval each epoch."""
import copy
import torch
import torch.nn.functional as F


def fit(model, loader, opt, epochs, decay=0.999):
    ema_model = copy.deepcopy(model)
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            with torch.no_grad():
                for e, p in zip(ema_model.parameters(), model.parameters()):
                    e.mul_(decay).add_(p, alpha=1 - decay)
        ema_model.eval()
