"""The loader is handed to a method whose instance parameter is called `this`: `runner.run_epoch(train_dl)` binds
`train_dl` to `batches`, the method trains on it, and nothing shards it (bad; the old mapping skipped the first
parameter only when it was spelled `self`/`cls`)."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


class Runner:
    def __init__(this, net, opt):
        this.net = net
        this.opt = opt

    def run_epoch(this, batches):
        for inputs, target in batches:
            loss = torch.nn.functional.l1_loss(this.net(inputs.cuda()), target.cuda())
            this.opt.zero_grad()
            loss.backward()
            this.opt.step()


def main(cfg, net, dataset):
    dist.init_process_group("nccl")
    net = torch.nn.parallel.DistributedDataParallel(net.cuda())
    runner = Runner(net, torch.optim.AdamW(net.parameters(), lr=cfg.lr))
    train_dl = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=False)  # expect: SF501
    for epoch in range(cfg.epochs):
        runner.run_epoch(train_dl)
