"""The caller reads the gradient of the labels the helper made to require grad."""
import torch
import torch.nn as nn


def to_tensors(batch):
    return torch.tensor(batch["x"]), torch.tensor(batch["y"], requires_grad=True)


def attribute_targets(net, batches):
    objective = nn.MSELoss()
    for batch in batches:
        x, y = to_tensors(batch)
        loss = objective(net(x), y)
        loss.backward()
        print(y.grad.abs().mean())
