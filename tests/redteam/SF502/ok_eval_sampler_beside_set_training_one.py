"""The training sampler gets set_epoch; the evaluation sampler (a shuffling default) feeds only an evaluation helper of another file."""
import torch
from torch.utils.data import DataLoader, DistributedSampler

from engine import evaluate, train_one_epoch


def main(model, optimizer, train_set, test_set, epochs):
    torch.distributed.init_process_group("nccl")
    train_sampler = DistributedSampler(train_set)
    test_sampler = DistributedSampler(test_set)
    train_loader = DataLoader(train_set, batch_size=8, sampler=train_sampler)
    test_loader = DataLoader(test_set, batch_size=8, sampler=test_sampler)
    for epoch in range(epochs):
        train_sampler.set_epoch(epoch)
        train_one_epoch(model, optimizer, train_loader, epoch)
        evaluate(model, test_loader)
