"""The script's own `set_seed` only exports PYTHONHASHSEED: torch, numpy and the loader stay unseeded."""
import os

import torch
from torch.utils.data import DataLoader


def set_seed(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)


if __name__ == "__main__":  # expect: SF420
    set_seed(42)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in DataLoader(dataset, batch_size=32, shuffle=True):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
