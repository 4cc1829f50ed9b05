"""a step reading the values of a dict of already reduced metrics, one after the other (ok)."""
import torch


def train_step(model, batch, optimizer):
    out = model(batch["x"].cuda())
    loss = out["loss"]
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    stats = {"loss": loss.detach(), "acc": out["acc"].detach()}
    return {name: value.item() for name, value in stats.items()}
