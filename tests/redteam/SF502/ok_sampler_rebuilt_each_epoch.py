"""The sampler is rebuilt every epoch with a new seed."""
import torch
from torch.utils.data import DataLoader, DistributedSampler


def main(model, dataset, opt, epochs, base_seed):
    for epoch in range(epochs):
        loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset, seed=base_seed + epoch))
        for batch in loader:
            model(batch).sum().backward()
            opt.step()
