"""Bias correction: features recomputed under no_grad each batch, then re-bound through a bias layer (not carried)."""
import torch


def train_bias(model, bias_layer, loader, opt):
    for x, y in loader:
        with torch.no_grad():
            outputs = model(x)
        outputs = bias_layer(outputs)
        loss = torch.nn.functional.cross_entropy(outputs, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
