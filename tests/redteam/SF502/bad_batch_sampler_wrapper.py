"""A DistributedSampler wrapped in a BatchSampler; the epoch is never set on the inner sampler."""
import torch
from torch.utils.data import BatchSampler, DataLoader, DistributedSampler


def main(model, dataset, opt, epochs):
    torch.distributed.init_process_group("nccl")
    inner = DistributedSampler(dataset)  # expect: SF502
    batches = BatchSampler(inner, batch_size=32, drop_last=True)
    loader = DataLoader(dataset, batch_sampler=batches)
    for epoch in range(epochs):
        for x in loader:
            model(x).sum().backward()
            opt.step()
