"""The helper restores whatever mode the model was in with train(was_training)."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def evaluate(model, loader):
    was_training = model.training
    model.eval()
    out = [model(x) for x in loader]
    model.train(was_training)
    return out


def fit(model, loader, val_loader, opt, epochs):
    model.train()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
        evaluate(model, val_loader)
