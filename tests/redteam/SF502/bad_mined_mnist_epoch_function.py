"""Paraphrase of a mined torchrun MNIST script: a shuffling sampler with explicit replicas and rank, a same-file per-epoch function, no set_epoch anywhere."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def run_epoch(cfg, net, batches, opt, epoch, device):
    net.train()
    for i, (images, labels) in enumerate(batches):
        images, labels = images.to(device), labels.to(device)
        opt.zero_grad()
        loss = F.nll_loss(net(images), labels)
        loss.backward()
        opt.step()
        if i % cfg.log_every == 0 and device == 0:
            print(epoch, i, loss.item())


def main(cfg, net_cls, digits):
    device = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl", init_method="env://")
    torch.cuda.set_device(device)
    replicas = dist.get_world_size()
    shard = DistributedSampler(digits, num_replicas=replicas, rank=device)  # expect: SF502
    batches = DataLoader(digits, batch_size=cfg.global_batch // replicas, sampler=shard)
    net = DistributedDataParallel(net_cls().to(device), device_ids=[device])
    opt = torch.optim.Adadelta(net.parameters(), lr=cfg.lr)
    decay = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=cfg.gamma)
    for epoch in range(1, cfg.epochs + 1):
        run_epoch(cfg, net, batches, opt, epoch, device)
        decay.step()
    if device == 0 and cfg.save:
        torch.save(net.state_dict(), "digits_ddp.pt")
    dist.destroy_process_group()
