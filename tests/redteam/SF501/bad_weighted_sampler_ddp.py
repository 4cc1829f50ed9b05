"""Class-balanced WeightedRandomSampler in a DDP job: every rank draws from the whole dataset."""
import torch
from torch import distributed as dist
from torch.utils.data import DataLoader, WeightedRandomSampler


def main(model, dataset, class_weights, epochs):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model.cuda())
    weights = [class_weights[label] for _, label in dataset.samples]
    balanced = WeightedRandomSampler(weights, num_samples=len(weights))
    loader = DataLoader(dataset, batch_size=64, sampler=balanced)  # expect: SF501
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda()).backward()
            optimizer.step()
