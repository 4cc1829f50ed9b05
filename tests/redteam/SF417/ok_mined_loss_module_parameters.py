"""Mined (variational model fit): the loss object is a module with trainable guide parameters; its parameters are clipped."""
import torch


def fit(loss_fn, loader, epochs):
    opt = torch.optim.Adam(loss_fn.parameters(), lr=1e-3)
    for _ in range(epochs):
        for batch in loader:
            opt.zero_grad()
            reg = 1e-4 * sum(x.pow(2).sum() for x in loss_fn.guide.parameters())
            loss = loss_fn(*batch) + reg
            loss.backward()
            torch.nn.utils.clip_grad_value_(loss_fn.parameters(), 1.0)
            opt.step()
