"""A per-step scratch tensor moved to `placement.where`, an attribute of a class of this file bound to
`torch.device("cpu")`: a move to the host, not a host-to-device copy, whatever the attribute is called (near miss)."""
import torch


class Placement:
    def __init__(self):
        self.where = torch.device("cpu")


placement = Placement()


def train(model, loader, opt):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        tally = torch.zeros(4).to(placement.where)
        tally[0] += loss.item()
