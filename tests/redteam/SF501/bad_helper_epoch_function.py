"""The loader (shuffle passed positionally) is handed to a same-file epoch function that trains on it."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def run_epoch(net, data_iter, opt, scaler):
    for inputs, target in data_iter:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.l1_loss(net(inputs.cuda()), target.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()


def main(cfg, net, dataset):
    dist.init_process_group("nccl")
    net = torch.nn.parallel.DistributedDataParallel(net.cuda())
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr)
    train_dl = DataLoader(dataset, cfg.batch_size, True, num_workers=cfg.workers)  # expect: SF501
    for epoch in range(cfg.epochs):
        run_epoch(net, train_dl, opt, None)
