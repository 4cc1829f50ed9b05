"""A validation loader without a sampler that is never trained on."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main(model, train_set, val_set, epochs):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=32, sampler=sampler)
    val_loader = DataLoader(val_set, batch_size=256)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in train_loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        with torch.no_grad():
            correct = sum((model(x).argmax(1) == y).sum().item() for x, y in val_loader)
