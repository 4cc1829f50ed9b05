"""ok set grad enabled false."""
import torch


def evaluate(model, loader):
    model.eval()
    with torch.set_grad_enabled(False):
        return [model(x).argmax(-1) for x in loader]
