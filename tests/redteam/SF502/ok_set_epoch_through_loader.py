"""set_epoch reached through the loader's sampler attribute."""
import torch
from torch.utils.data import DataLoader, DistributedSampler


def main(model, dataset, opt, epochs):
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset))
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        for x in loader:
            model(x).sum().backward()
            opt.step()
