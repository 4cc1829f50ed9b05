"""ImageNet-style torchrun script: a shuffling DistributedSampler built once, set_epoch forgotten."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main(args, model, train_dataset):
    dist.init_process_group("nccl")
    gpu = int(os.environ["LOCAL_RANK"])
    model = torch.nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
    train_sampler = DistributedSampler(train_dataset)  # expect: SF502
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, sampler=train_sampler,
                              num_workers=args.workers, pin_memory=True)
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    for epoch in range(args.start_epoch, args.epochs):
        model.train()
        for images, target in train_loader:
            output = model(images.cuda(gpu, non_blocking=True))
            loss = torch.nn.functional.cross_entropy(output, target.cuda(gpu, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
