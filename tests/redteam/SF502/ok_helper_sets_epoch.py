"""A same-file hook called at the start of every epoch sets it on whatever it is given."""
import torch
from torch.utils.data import DataLoader, DistributedSampler


def on_epoch_start(sampler, epoch):
    if isinstance(sampler, DistributedSampler):
        sampler.set_epoch(epoch)


def main(model, dataset, opt, epochs):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    for epoch in range(epochs):
        on_epoch_start(sampler, epoch)
        for batch in loader:
            model(batch).mean().backward()
            opt.step()
