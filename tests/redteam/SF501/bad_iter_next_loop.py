"""Step-based loop drawing batches with iter/next from an unsharded loader."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def train(model, dataset, max_steps):
    dist.init_process_group("nccl")
    model = torch.nn.parallel.DistributedDataParallel(model)
    loader = DataLoader(dataset, batch_size=16, shuffle=True)  # expect: SF501
    opt = torch.optim.Adam(model.parameters())
    data_iter = iter(loader)
    for step in range(max_steps):
        try:
            batch = next(data_iter)
        except StopIteration:
            data_iter = iter(loader)
            batch = next(data_iter)
        model(batch).mean().backward()
        opt.step()
        opt.zero_grad()
