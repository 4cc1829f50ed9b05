"""Entry script: the epoch loop hands the loader to the engine file's function, which never sets the epoch."""
from torch.utils.data import DataLoader, DistributedSampler

from .engine import train_one_epoch


def main(model, dataset, optimizer, epochs):
    sampler = DistributedSampler(dataset)  # expect: SF502
    loader = DataLoader(dataset, batch_size=32, sampler=sampler)
    for epoch in range(epochs):
        train_one_epoch(model, loader, optimizer, epoch)
