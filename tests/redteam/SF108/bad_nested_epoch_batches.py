"""Epoch loop with an inner batch loop; the state carried through the inner loop (bad)."""
import torch


def train(model, loader, opt, epochs, bs):
    for epoch in range(epochs):
        h = model.begin_state(bs)
        for x, y in loader:
            y_hat, h = model(x, h)  # expect: SF108
            l = torch.nn.functional.cross_entropy(y_hat, y.reshape(-1))
            opt.zero_grad()
            l.backward()
            opt.step()
