"""A seeding helper from a package the scan does not show (an installed utility library)."""
import torch
from mytools.repro import set_global_seed

if __name__ == "__main__":
    set_global_seed(5)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in data:
        opt.zero_grad()
        (model(x) - y).abs().mean().backward()
        opt.step()
