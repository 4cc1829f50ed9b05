"""The dtype comes from a module-level variable; the helper that trains is called after the cast."""
import torch

PRECISION = torch.float16


def train(model, optimizer, loader, steps):
    for step, (x, y) in zip(range(steps), loader):
        loss = (model(x) - y).abs().mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()


def run(loader):
    model = Regressor()
    model.to(PRECISION)  # expect: SF305
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    train(model, optimizer, loader, steps=10_000)
