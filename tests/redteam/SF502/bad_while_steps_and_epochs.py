"""An epoch counter in a while loop around the loader; the sampler never hears of it."""
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def train(model, dataset, opt, max_steps):
    sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)  # expect: SF502
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    step, epoch = 0, 0
    while step < max_steps:
        for batch in loader:
            model(batch).mean().backward()
            opt.step()
            opt.zero_grad()
            step += 1
        epoch += 1
