"""A project's own sampler named DistributedSampler (not torch's), and a loop over it."""
from torch.utils.data import DataLoader

from mylib.samplers import DistributedSampler


def main(model, dataset, opt, epochs):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(epochs):
        for batch in loader:
            model(batch).sum().backward()
            opt.step()
