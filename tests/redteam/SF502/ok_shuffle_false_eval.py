"""A deterministic evaluation sampler (shuffle=False) over several epochs."""
from torch.utils.data import DataLoader, DistributedSampler


def evaluate(model, val_set, rounds):
    sampler = DistributedSampler(val_set, shuffle=False)
    loader = DataLoader(val_set, batch_size=128, sampler=sampler)
    for round_ in range(rounds):
        for x, y in loader:
            model(x)
