"""Fabric with use_distributed_sampler=False and a hand-built DistributedSampler that is never told the epoch."""
import lightning as L
from torch.utils.data import DataLoader, DistributedSampler


def main(model, optimizer, dataset, epochs):
    fabric = L.Fabric(strategy="ddp", devices=2)
    fabric.launch()
    model, optimizer = fabric.setup(model, optimizer)
    sampler = DistributedSampler(dataset, num_replicas=fabric.world_size, rank=fabric.global_rank)  # expect: SF502
    loader = fabric.setup_dataloaders(DataLoader(dataset, batch_size=8, sampler=sampler), use_distributed_sampler=False)
    for epoch in range(epochs):
        for batch in loader:
            fabric.backward(model(batch).sum())
            optimizer.step()
            optimizer.zero_grad()
