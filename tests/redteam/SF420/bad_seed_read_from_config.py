"""The seed is read from the config (`cfg.get_seed()`) and logged, never handed to any generator."""
import torch
from torch import nn


class Config:
    def __init__(self, **values):
        self.values = values

    def get_seed(self):
        return self.values.get("seed", 0)


if __name__ == "__main__":  # expect: SF420
    cfg = Config(seed=7, lr=0.1)
    print("seed", cfg.get_seed())
    net = nn.Linear(3, 1)
    opt = torch.optim.SGD(net.parameters(), lr=cfg.values["lr"])
    for x, y in batches:
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        opt.step()
