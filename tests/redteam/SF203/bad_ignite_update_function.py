"""An ignite `update` function (backward + step per batch) with the anomaly context around it."""
import torch


def make_update(model, optimizer, loss_fn):
    def update(engine, batch):
        model.train()
        x, y = batch
        with torch.autograd.detect_anomaly():  # expect: SF203
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
        optimizer.step()
        return loss.item()

    return update
