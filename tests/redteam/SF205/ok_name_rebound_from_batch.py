"""A name that may hold a factory result or a loaded tensor (two bindings): not a factory's tensor alone."""
import torch


def train(model, loader, optimizer, device, use_prior):
    for x, y in loader:
        prior = torch.zeros(x.size(0), 4)
        if use_prior:
            prior = x[:, :4]
        prior = prior.to(device)
        loss = (model(x) + prior - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
