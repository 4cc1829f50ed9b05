"""The loader goes to a same-file train_one_epoch every epoch; nobody calls set_epoch."""
import torch
from torch.utils.data import DataLoader, DistributedSampler


def train_one_epoch(model, loader, optimizer, epoch):
    model.train()
    for step, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(args, model, dataset_train):
    torch.distributed.init_process_group(backend="nccl")
    sampler_train = DistributedSampler(dataset_train, num_replicas=args.world_size, rank=args.rank)  # expect: SF502
    data_loader_train = DataLoader(dataset_train, sampler=sampler_train, batch_size=args.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.start_epoch, args.epochs):
        train_one_epoch(model, data_loader_train, optimizer, epoch)
