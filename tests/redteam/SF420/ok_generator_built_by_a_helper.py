"""The generator comes from a helper of the script and is seeded through its method; the seeding helper is
registered as the loader's worker init (a callback, never called by name)."""
import random

import numpy as np
import torch
from torch.utils.data import DataLoader


def make_generator(device="cpu"):
    return torch.Generator(device=device)


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def main(seed):
    gen = make_generator()
    gen.manual_seed(seed)
    torch.manual_seed(seed)
    loader = DataLoader(ds, shuffle=True, generator=gen, worker_init_fn=seed_worker)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()


if __name__ == "__main__":
    main(0)
