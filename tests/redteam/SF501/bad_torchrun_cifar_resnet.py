"""Image classifier launched with torchrun; the author wrapped the model but kept the single-GPU loader."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--batch-size", type=int, default=256)
    return parser.parse_args()


def main():
    args = parse()
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = torchvision.models.resnet18(num_classes=10).cuda()
    net = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank])
    train_set = torchvision.datasets.CIFAR10("data", train=True, download=True,
                                             transform=torchvision.transforms.ToTensor())
    train_loader = DataLoader(  # expect: SF501
        train_set,
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=8,
        pin_memory=True,
    )
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    for epoch in range(args.epochs):
        net.train()
        for images, labels in train_loader:
            images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            loss = criterion(net(images), labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
