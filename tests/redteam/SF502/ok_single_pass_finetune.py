"""A single pass over the data: the first order is as good as any."""
import torch
from torch.utils.data import DataLoader, DistributedSampler


def finetune(model, dataset, opt):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    for step, batch in enumerate(loader):
        model(batch).loss.backward()
        opt.step()
        opt.zero_grad()
