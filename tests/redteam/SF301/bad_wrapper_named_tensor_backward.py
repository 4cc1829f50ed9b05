"""A float16 autocast step whose output is held by a variable named `engine`: `engine.backward(grad)` backpropagates that
tensor itself (with an incoming gradient), nothing scales the float16 loss (bad)."""
import torch


def train(model, optimizer, loader):
    for x, grad in loader:
        with torch.autocast("cuda", dtype=torch.float16):  # expect: SF301
            engine = model(x)
        engine.backward(grad)
        optimizer.step()
        optimizer.zero_grad()
