"""The evaluation helper receives the model by keyword."""
import torch
import torch.nn.functional as F


@torch.no_grad()
def evaluate(loader, model):
    model.eval()
    return [model(x).argmax(1) for x, _ in loader]


def train(net, loader, val_loader, opt, epochs):
    net.train()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(net(x), y).backward()
            opt.step()
        preds = evaluate(val_loader, model=net)  # expect: SF407
